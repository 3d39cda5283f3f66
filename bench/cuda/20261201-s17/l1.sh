#!/bin/bash
# Lead call 1 (issue #36's greedy excerpt): where a one-shot `hark transcribe --backend cuda` spends its time
# (HARK_TIMINGS=1 phases, HARK_CUDA_STARTUP=1), graphs on and off, and the per-kernel profile of a greedy window
# and a beam window (hark bench whisper, HARK_CUDA_PROFILE=1). Main 8c2ba3d + cli/timings.go, -tags hark_nocubin
# with the checkout's cubins. Run after stage.sh has everything (three calls: model parts, hark).
set -u
R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/s17}; mkdir -p $OUT
cd $W && [ -e q8.bin ] && [ -x hark ] && [ -e excerpt.wav ] || { echo "not staged"; exit 3; }
export HARK_CUDA_CUBIN_DIR=$R/cuda/cubin HARK_TIMINGS=1
TIMEFORMAT=%R
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
  for f in jfk1s.wav jfk1s.wav jfk1s.wav jfk.wav excerpt.wav; do
    t=$( { time HARK_CUDA_STARTUP=1 ./hark transcribe --backend cuda --model q8.bin --beam 1 $f > out.txt 2> err.txt; } 2>&1 ); grep -h "hark:" err.txt; echo "RESULT $f graphs=1 ${t}s words=$(wc -w < out.txt)"
  done
  for r in 1 2 3; do for g in 1 0; do
    t=$( { time HARK_CUDA_GRAPHS=$g ./hark transcribe --backend cuda --model q8.bin --beam 1 excerpt.wav > out.txt 2> err.txt; } 2>&1 ); grep -h "timings" err.txt; echo "RESULT excerpt greedy graphs=$g run=$r ${t}s words=$(wc -w < out.txt)"
  done; done
  t=$( { time ./hark transcribe --backend cuda --model q8.bin --beam 5 excerpt.wav > out.txt 2> err.txt; } 2>&1 ); grep -h "timings" err.txt; echo "RESULT excerpt beam5 ${t}s words=$(wc -w < out.txt)"
} > $OUT/l1-phases.log 2>&1
{ HARK_CUDA_PROFILE=1 ./hark bench whisper --backend cuda --model q8.bin --audio jfk.wav --beam 5 -r 1 2>&1
  ./hark bench whisper --backend cuda --model q8.bin --audio jfk.wav --beam 5 -r 3 2>&1
} > $OUT/l1-bench.log 2>&1
cat $OUT/l1-phases.log; grep -v "^samples" $OUT/l1-bench.log | head -150
