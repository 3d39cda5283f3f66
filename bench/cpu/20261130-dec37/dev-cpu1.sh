#!/bin/bash
# work a token at one worker (no helpers, no spinning): user CPU seconds of tg128 -r 3, alternating
M=/tmp/dec37-m/smollm2-135m-shape-v1-L30-q8_0.gguf
echo "== start $(date -u +%T); load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in 1 2 3; do
  for h in base new; do
    o=$( { /usr/bin/time -f "user %U s sys %S s wall %e s" /tmp/dec37-hark-$h bench llm --backend cpu --model $M -t 1 -r 3 --pp 0 --tg 128 2>&1 | grep -E '^samples|user'; } 2>&1 | tr '\n' ' ')
    echo "hark-$h round $r: $o load $(cut -d' ' -f1-3 /proc/loadavg)"
  done
done
echo "== end $(date -u +%T)"
