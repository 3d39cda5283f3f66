#!/bin/bash
# Lead call 2: the fixed cost's parts, with an experiment build (branch exp, not merged: main + prints of
# OpenFile / openBackend / buildPlan / backend.Load / the weights' upload under HARK_TIMINGS=1, and
# HARK_EXP_SKIPCLOSE=1 leaving the runtime unclosed at exit). On l1's machine (stage.sh's /w/s17).
set -u
R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/s17}; mkdir -p $OUT
cd $W && [ -e q8.bin ] && [ -x harkx ] && [ -e excerpt.wav ] || { echo "not staged"; exit 3; }
export HARK_CUDA_CUBIN_DIR=$R/cuda/cubin HARK_TIMINGS=1
TIMEFORMAT=%R
{ for r in 1 2 3; do for f in jfk1s.wav excerpt.wav; do for s in 0 1; do
    t=$( { time HARK_EXP_SKIPCLOSE=$s HARK_CUDA_STARTUP=1 ./harkx transcribe --backend cuda --model q8.bin --beam 1 $f > out.txt 2> err.txt; } 2>&1 ); grep -h "hark:\|exp:" err.txt; echo "RESULT $f skipclose=$s run=$r ${t}s words=$(wc -w < out.txt)"
  done; done; done
  echo "-- a bare start: hark --version"; for r in 1 2 3; do t=$( { time ./harkx --version > /dev/null; } 2>&1 ); echo "RESULT version ${t}s"; done
} > $OUT/l2-phases.log 2>&1
cat $OUT/l2-phases.log
