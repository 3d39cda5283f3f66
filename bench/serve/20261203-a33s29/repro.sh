#!/usr/bin/env bash
# Does the gap between the twenty-eighth session's two scripts come back? Blocks of a33s28's ab.sh (two servers, both
# at the default interval, K rounds) and of the speed-cpu.sh (HARK 2 K), alternated X Y Y X ..., in a session
# at autogroup nice -20 (run under setsid). Usage (repository root): setsid repro.sh HARK [CYCLES [K]] > log
set -uo pipefail
hark=$(realpath "$1"); cycles=${2:-2}; k=${3:-5}
echo -20 > /proc/self/autogroup
d=bench/serve/20261203-a33s28
X() { echo "=== ab.sh $k rounds, load $(cut -d' ' -f1-3 /proc/loadavg)"; DIR=/tmp/a33s29 PAUSE=3 $d/ab.sh "$hark" "$k" 2>&1 | grep -E '^(chat|greedy|sampled|== round)'; }
Y() { echo "=== speed-cpu.sh 2 $k, load $(cut -d' ' -f1-3 /proc/loadavg)"; bench/serve/speed-cpu.sh "$hark" 2 "$k" 2>&1 | grep -E '^(== (round|medians|median client))|^samples|^run 1'; }
for c in $(seq "$cycles"); do if [ $((c % 2)) -eq 1 ]; then X; Y; else Y; X; fi; done
echo "=== end, load $(cut -d' ' -f1-3 /proc/loadavg)"
