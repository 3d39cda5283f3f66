#!/bin/bash
# wh37 on the 2-core dev VM: `hark bench whisper` with the kit q8_0 model on the excerpt at 2 threads, main 78e82cd
# ("base") and wh37 ("new") alternating, ROUNDS rounds (encoder ms a window, decoder ms a token, the chained greedy
# window's ms a token).
#   bench/cpu/20261201-wh37/devbench.sh BASE_BIN NEW_BIN Q8 EXCERPT_FLAC [ROUNDS]
set -u
B=$1; N=$2; M=$3; A=$4; R=${5:-2}
for r in $(seq $R); do for b in base new; do bin=$B; [ $b = new ] && bin=$N
  echo "== $b round $r load $(cut -d' ' -f1 /proc/loadavg)"
  $bin bench whisper --backend cpu --model $M --audio $A -t 2 --tokens 64 -r 3 2>&1 | grep -E '^samples (encode|decode|greedy)'
done; done
