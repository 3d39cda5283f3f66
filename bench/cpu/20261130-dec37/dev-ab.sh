#!/bin/bash
# A/B: main 43de82e (base) against branch dec37 (new), tg128 at 2 threads, alternating
M=/tmp/dec37-m/smollm2-135m-shape-v1-L30-q8_0.gguf
echo "== start $(date -u +%T); load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in 1 2 3 4; do
  for h in base new; do
    echo "hark-$h round $r: $(/tmp/dec37-hark-$h bench llm --backend cpu --model $M -t 2 -r 3 --pp 0 --tg 128 2>&1 | grep -E '^samples') load $(cut -d' ' -f1-3 /proc/loadavg)"
  done
done
echo "== end $(date -u +%T)"
