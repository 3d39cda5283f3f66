#!/bin/bash
# ln34 (issue #34), call 5 (calls 1-4's machine, main's hark staged by call 3: main's cubins, no JIT): the
# LayerNorm launch's threadgroup (item 2 of the brief without a kernel change): HARK_CUDA_TUNE=NormThreads (cuda:
# 256, one threadgroup a row; 384 floats at 64 threads are 6 a thread, at 384 one), 2 rounds of `hark bench
# whisper --backend cuda` over the sizes in turn.
set -u
R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/ln34}; S=$(date +%s); mkdir -p $OUT
el() { echo $(( $(date +%s) - S )); }
[ -e $W/hark-main ] || { echo "not call 3's machine"; exit 3; }
cd $W; export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
B="bench whisper --backend cuda --model q8.bin --audio $W/jfk.wav --tokens 64 -r 3"
{ for r in 1 2; do
    echo "=== round $r at $(el) s"
    for c in base NormThreads=32 NormThreads=64 NormThreads=128 NormThreads=384; do
      E=""; [ $c = base ] || E="HARK_CUDA_TUNE=$c"
      echo "== $c"; env $E ./hark-main $B 2>&1 | grep -E 'decode \(|encode \(|samples decode'
    done
  done; echo "== done at $(el) s"; } > $OUT/call5-norm-threads.log 2>&1
cat $OUT/call5-norm-threads.log
