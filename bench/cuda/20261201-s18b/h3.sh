#!/bin/bash
# Second GPU check, call 3 of 3 (h1-h2's machine): the merged main's hark (with gelu34): jfk greedy and beam 5,
# `hark bench whisper --backend cuda` in two rounds (the decoder step, issue #34's <= 0.3 ms), one graphs-off profile
# of the decoder's launches, and SmolLM2's tg128 (q8_0) and launches a token. $K holds hark.xz.
set -u
R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/s18}; S=$(date +%s); mkdir -p $OUT
el() { echo $(( $(date +%s) - S )); }
[ -e $W/q8.bin ] || { echo "not h1-h2's machine"; exit 3; }
W=$W bash bench/cuda/20261201-s17/stage.sh > /dev/null
cd $W; export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
JFK=$W/shared/audio/jfk.wav; B="bench whisper --backend cuda --model q8.bin --audio $JFK --tokens 64 -r 3"
{ for bm in 1 5; do ./hark transcribe --backend cuda --model q8.bin --beam $bm $JFK 2>&1 | tail -1; done
  for r in 1 2 3; do echo "== round $r at $(el) s"; ./hark $B 2>&1 | grep -E 'decode \(|encode \(|samples decode'; done
  echo "== profile (graphs off) at $(el) s"; HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 ./hark $B 2>&1 | grep -A14 'decode profile'
  echo "== LLM at $(el) s"; mkdir -p m
  ./hark bench llm --backend cpu --dir m --type q8_0 --tokenizer $W/shared/llm-kit/tokenizers/smollm2 --pp 8 --tg 0 -r 1 -t 8 > /dev/null 2>&1
  ./hark bench llm --backend cuda --model m/smollm2-135m-shape-v1-L30-q8_0.gguf -r 3 --pp 0 --tg 128 2>&1 | grep -E '^\| .*tg128'
  HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model m/smollm2-135m-shape-v1-L30-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -E 'cuda tg128'
  echo "== done at $(el) s"; } > $OUT/h3-bench.log 2>&1
cat $OUT/h3-bench.log
