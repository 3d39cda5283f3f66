#!/bin/bash
# Call 3 of 3 (p1's machine): hark 23aa649 (-tags hark_nocubin, the checkout's cubins) on the excerpt, greedy:
# wall time of the whole and of a 1-s file (the fixed part: the GPU's start, the model's load, the exit), the host's
# CPU profile (HARK_CPUPROFILE) and the GPU's time per kernel over the whole excerpt (HARK_CUDA_PROFILE=1, graphs
# off: slower, for the shares). $K holds wq8.xz.3, hark.xz.
set -u
K=${K:-.gpu/p3}; K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; W=/w/p
cd $W && [ -f wq8.xz.2 ] || { echo "not p1-p2's machine"; exit 3; }
cat wq8.xz.1 wq8.xz.2 $K/wq8.xz.3 | xz -dc > q8.bin && xz -dc $K/hark.xz > hark && chmod +x hark
export HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
TIMEFORMAT=%R
{ HARK_CUDA_STARTUP=1 ./hark transcribe --backend cuda --model q8.bin jfk.wav 2>&1 | head -1
  for r in 1 2 3; do
    for f in jfk1s.wav jfk.wav excerpt.wav; do t=$( { time ./hark transcribe --backend cuda --beam 1 --model q8.bin $f > /dev/null 2>&1; } 2>&1 ); echo "RESULT greedy $f run $r: ${t}s"; done
  done
  HARK_CUDA_STARTUP=1 ./hark transcribe --backend cuda --beam 1 --model q8.bin jfk1s.wav 2>&1
  echo "== CPU profile of the excerpt"
  HARK_CPUPROFILE=$OUT/excerpt-greedy.prof ./hark transcribe --backend cuda --beam 1 --model q8.bin excerpt.wav > /dev/null 2>&1; ls -la $OUT
  echo "== GPU time per kernel over the excerpt (graphs off)"
  /usr/bin/time -f "wall %e s" env HARK_CUDA_PROFILE=1 ./hark transcribe --backend cuda --beam 1 --model q8.bin excerpt.wav 2>&1 >/dev/null | tail -45
} > $OUT/p3.log 2>&1
cat $OUT/p3.log
