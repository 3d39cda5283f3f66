#!/bin/bash
# Lead call 3: main ff6b63a's one-shot fixed-cost changes (hark1: the file opened beside the backend, repack split
# over the cores, CloseForExit, the kernel images made beside the context) against hark0 (8c2ba3d + HARK_TIMINGS),
# alternating, greedy, the excerpt and jfk's first second. On stage.sh's machine.
set -u
R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/s17}; mkdir -p $OUT
cd $W && { [ -x hark0 ] || cp hark hark0; } && [ -e q8.bin ] && [ -x hark1 ] && [ -x hark0 ] && [ -e excerpt.wav ] || { echo "not staged"; ls; exit 3; }
export HARK_CUDA_CUBIN_DIR=$R/cuda/cubin HARK_TIMINGS=1
TIMEFORMAT=%R
{ ./hark1 transcribe --backend cuda --model q8.bin --beam 1 jfk1s.wav > /dev/null 2>&1
  for r in 1 2 3 4; do for f in jfk1s.wav excerpt.wav; do for h in hark0 hark1; do
    t=$( { time HARK_CUDA_STARTUP=1 ./$h transcribe --backend cuda --model q8.bin --beam 1 $f > $h.txt 2> err.txt; } 2>&1 ); grep -h "hark:" err.txt; echo "RESULT $h $f run=$r ${t}s words=$(wc -w < $h.txt)"
  done; cmp -s hark0.txt hark1.txt && echo "same text"; done; done
} > $OUT/l3.log 2>&1
cat $OUT/l3.log
