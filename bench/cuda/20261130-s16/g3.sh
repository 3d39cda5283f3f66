#!/bin/bash
# Call 3 (g1's machine): the kit model joined, then the 204.2-s excerpt end to end, hark (23aa649), hark0 (e5ab622)
# and whisper.cpp alternating, greedy and beam 5, 3 runs each; both harks read the checkout's cubins
# (HARK_CUDA_CUBIN_DIR; cached after the warm-up). $K holds wq8.xz.3, hark.xz.
set -u
K=${K:-.gpu/g3}; K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; W=/w/g
cd $W && [ -x hark0 ] || { echo "not g1-g2's machine"; exit 3; }
cat wq8.xz.1 wq8.xz.2 $K/wq8.xz.3 | xz -dc > q8.bin && sha256sum q8.bin
xz -dc $K/hark.xz > hark && chmod +x hark
export HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
WC=$W/pc/bin/whisper-cli
TIMEFORMAT=%R
{ echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  for h in hark hark0; do HARK_CUDA_STARTUP=1 ./$h transcribe --backend cuda --model q8.bin jfk.wav 2>&1 | head -1; done
  $WC -m q8.bin -f jfk.wav -t 8 -l en -bs 1 -np -nt > /dev/null 2>&1
  for r in 1 2 3; do for bm in 1 5; do
    for h in hark hark0; do
      t=$( { time ./$h transcribe --backend cuda --model q8.bin --beam $bm excerpt.wav > $h-$bm.txt 2>$h-$bm.err; } 2>&1 ); echo "RESULT $h cuda beam=$bm run=$r ${t}s words=$(wc -w < $h-$bm.txt)"
    done
    t=$( { time $WC -m q8.bin -f excerpt.wav -t 8 -l en -bs $bm -np -nt > w-$bm.txt 2>w-$bm.err; } 2>&1 ); echo "RESULT whisper.cpp cuda beam=$bm run=$r ${t}s words=$(wc -w < w-$bm.txt)"
  done; done
  for bm in 1 5; do cmp -s hark-$bm.txt hark0-$bm.txt && echo "beam $bm: hark and hark0 print the same text"; done
  echo "-- whisper.cpp's own timings (beam 1)"; $WC -m q8.bin -f excerpt.wav -t 8 -l en -bs 1 2>&1 >/dev/null | grep -E "load time|mel time|encode time|decode time|batchd time|total time"
} > $OUT/g3-excerpt.log 2>&1
cat $OUT/g3-excerpt.log
