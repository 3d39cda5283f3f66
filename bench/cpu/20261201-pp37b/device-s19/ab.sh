#!/bin/bash
# main eecefd8 / pp37b whole steps (DefaultChunkRows -1) / pp37b chunks of 64, rotating, pp512+tg128 -r 3 at T threads
T=$1; R=$2
for r in $(seq $R); do
  case $((r % 3)) in 1) o="main whole chunk";; 2) o="whole chunk main";; 0) o="chunk main whole";; esac
  for b in $o; do echo "== round $r $b T=$T load $(cut -d' ' -f1 /proc/loadavg)"
    TIMEFORMAT="TIME $b user %U wall %R"; { time ./hark-$b bench llm --backend cpu --model /tmp/ab/m/smollm2-135m-shape-v1-L30-q8_0.gguf -t $T -r 3 --pp 512 --tg 128 2>&1 | grep samples; } 2>&1
  done; done
