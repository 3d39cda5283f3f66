#!/usr/bin/env bash
# The issue's script, bench/serve/speed-cpu.sh HARK 2 K, alternated between two builds (X Y Y X ...), in a session at
# autogroup nice -20: each block's bench and chat from the same build. Usage (root): setsid blocks.sh HARK_X HARK_Y [CYCLES [K]] > log
set -uo pipefail
x=$(realpath "$1"); y=$(realpath "$2"); cycles=${3:-2}; k=${4:-6}
echo -20 > /proc/self/autogroup
run() { echo "=== $1, $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"; bench/serve/speed-cpu.sh "$1" 2 "$k" 2>&1 | grep -E '^== (medians|per-round|median client)|^samples.*chained|^run 1'; }
for c in $(seq "$cycles"); do if [ $((c % 2)) -eq 1 ]; then run "$x"; run "$y"; else run "$y"; run "$x"; fi; done
echo "=== end $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
