#!/bin/bash
# Final check, call 4 of 4 (f1-f3's machine): the merged main's hark against whisper.cpp built in f1, alternating,
# on the 204.2-s excerpt, greedy and beam 5, 3 runs each (process wall time); HARK_TIMINGS of the last runs; then
# hark bench whisper (decoder step, greedy and beam windows, waits a token) and the LLM rows (tg128, launches).
# $K holds hark.xz (CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -tags hark_nocubin, with the checkout's cubins).
set -u
R=$(pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=${W:-/w/s17}
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT; [ -x $W/pc/bin/whisper-cli ] && [ -s $W/excerpt.wav ] || { echo "not f1-f3's machine"; exit 3; }
bash bench/cuda/20261201-s17/stage.sh > /dev/null
cd $W
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
W8=$W/q8.bin; JFK=$W/jfk.wav; WC=$W/pc/bin/whisper-cli
TIMEFORMAT=%R
{ echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  HARK_CUDA_STARTUP=1 ./hark transcribe --backend cuda --model $W8 --beam 1 $JFK 2>&1 | head -2
  $WC -m $W8 -f $JFK -t 8 -l en -bs 1 -np -nt > /dev/null 2>&1
  for r in 1 2 3; do for bm in 1 5; do
    t=$( { time HARK_TIMINGS=1 ./hark transcribe --backend cuda --model $W8 --beam $bm excerpt.wav > h-$bm.txt 2>h-$bm.err; } 2>&1 ); echo "RESULT hark cuda beam=$bm run=$r ${t}s words=$(wc -w < h-$bm.txt)"; grep timings h-$bm.err
    t=$( { time $WC -m $W8 -f excerpt.wav -t 8 -l en -bs $bm -np -nt > w-$bm.txt 2>w-$bm.err; } 2>&1 ); echo "RESULT whisper.cpp cuda beam=$bm run=$r ${t}s words=$(wc -w < w-$bm.txt)"
  done; done
  echo "-- whisper.cpp's own timings (beam 1)"; $WC -m $W8 -f excerpt.wav -t 8 -l en -bs 1 -np 2>&1 >/dev/null | grep -E "load time|mel time|encode time|decode time|total time"
  echo "-- the first process of a jfk.wav after the cubin cache is cleared"; rm -rf ~/.cache/hark/cubin
  HARK_CUDA_STARTUP=1 HARK_TIMINGS=1 bash -c "time ./hark transcribe --backend cuda --model $W8 $JFK" 2>&1 | tail -4
} > $OUT/f4-excerpt.log 2>&1
{ echo "== bench whisper at $(el) s"; ./hark bench whisper --backend cuda -r 3 --beam 5 --model $W8 --audio $JFK 2>&1 | grep -vE '^samples'
  echo "== profile at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench whisper --backend cuda -r 1 --beam 5 --model $W8 --audio $JFK 2>&1 | grep -vE '^samples'
} > $OUT/f4-bench.log 2>&1
{ echo "== LLM at $(el) s"; TOK=$W/shared/llm-kit/tokenizers/smollm2; mkdir -p m
  ./hark bench llm --backend cpu --dir m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /dev/null 2>&1; ls m
  for f in q8_0 q4_0 f16; do ./hark bench llm --backend cuda --model m/smollm2-135m-shape-v1-L30-$f.gguf -r 3 --pp 0 --tg 128 2>&1 | grep -E '^\| smol|^\| .*(pp512|tg128)'; done
  echo "== launches a token, graphs off (q8_0)"; HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model m/smollm2-135m-shape-v1-L30-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -E 'cuda tg128'
  echo "== done at $(el) s"; } > $OUT/f4-llm.log 2>&1
cat $OUT/f4-excerpt.log $OUT/f4-bench.log $OUT/f4-llm.log
