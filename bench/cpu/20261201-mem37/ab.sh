#!/usr/bin/env bash
# mem37 (issue #37, memory): two hark binaries (BEFORE: main 78e82cd,
# AFTER: branch mem37) alternate `hark bench llm --pp 512 --tg 128 -t 2
# -r 3` on the SmolLM2-shaped q8_0 file, ROUNDS times, each run under
# GNU time for its user CPU and peak RSS. The order flips every round.
# Usage: ab.sh BEFORE AFTER MODEL.gguf ROUNDS > log
set -euo pipefail
before=$1; after=$2; model=$3; rounds=$4
echo "== $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
	order=("$before" "$after")
	if (( r % 2 == 0 )); then order=("$after" "$before"); fi
	for b in "${order[@]}"; do
		out=$(/usr/bin/time -f 'time user %U s, max RSS %M kB' "$b" bench llm --backend cpu --model "$model" -t 2 -r 3 --pp 512 --tg 128 2>&1)
		echo "$(basename "$b") round $r: $(echo "$out" | grep -E 'pp512|tg128|^time' | tr -s ' ' | tr '\n' ' ')"
	done
done
echo "== load $(cut -d' ' -f1-3 /proc/loadavg)"
