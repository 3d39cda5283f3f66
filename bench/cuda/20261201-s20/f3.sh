#!/bin/bash
# Twentieth session's GPU call 3 (fresh machine): where does PDL's loss come from? f2 measured PDL launches (each
# entry: griddepcontrol.wait, then launch_dependents at once) 3-10% slower than plain launches of the same cubins.
# Variants of the base module JIT-compiled from $HARK_CUDA_PTX (native modules from the checked-in cubins, plain):
# v0 = cuda/ptxpdl's form (wait, then the early trigger), v1 = wait only (the trigger at each block's exit);
# "off" = the same module launched plainly ($HARK_CUDA_PDL=0); main = the checked-in cubins. Decode tg128 of the
# SmolLM2 and 1B shapes, rounds alternating the variants. $K holds hark.xz, v0.ptx.xz, v1.ptx.xz, data.tar.xz.
set -u
R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/s20}; S=$(date +%s); mkdir -p $OUT $W/shared
el() { echo $(( $(date +%s) - S )); }
W=$W bash bench/cuda/20261201-s17/stage.sh > /dev/null
tar -C $W/shared -xJf $W/data.tar.xz
cd $W; export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
TOK=$W/shared/llm-kit/tokenizers/smollm2; mkdir -p m
./hark bench llm --backend cpu --dir m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
./hark bench llm --backend cpu --shape llama-1b --dir m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
v() { case $1 in main) echo "X=1";; v0) echo "HARK_CUDA_PTX=$W/v0.ptx";; v1) echo "HARK_CUDA_PTX=$W/v1.ptx";; v1off) echo "HARK_CUDA_PTX=$W/v1.ptx HARK_CUDA_PDL=0";; esac; }
{ echo "== models at $(el) s"
  for x in v0 v1; do env $(v $x) ./hark bench llm --backend cuda --model m/smollm2-135m-shape-v1-L30-q8_0.gguf -r 1 --pp 0 --tg 16 2>&1 | grep -E 'tg16'; echo "== $x JIT-compiled at $(el) s"; done
  for r in 1 2 3; do for x in main v1 v1off v0; do
    for f in llama-1b-shape-v1-L16-q8_0 llama-1b-shape-v1-L16-q4_0 smollm2-135m-shape-v1-L30-q8_0; do
      echo "== $f $x round $r at $(el) s"; env $(v $x) ./hark bench llm --backend cuda --model m/$f.gguf -r 3 --pp 0 --tg 128 2>&1 | grep -E '^\| .*tg128'; done
  done; done; echo "== done at $(el) s"; } > $OUT/f3.log 2>&1
cat $OUT/f3.log
