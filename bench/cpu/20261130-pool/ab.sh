#!/usr/bin/env bash
# The pool's passHold (engine/cpu/pool.go) on a loaded and a quiet machine:
# two hark binaries (before, after) alternate `hark bench llm` tg32 on the
# SmolLM2-shaped q8_0 file at 2 threads, ROUNDS times, with BUSY busy loops
# (`yes`, the load of other programs) beside them.
# Usage: ab.sh BEFORE AFTER MODEL.gguf BUSY ROUNDS > log
set -euo pipefail
before=$1; after=$2; model=$3; busy=$4; rounds=$5
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
for _ in $(seq "$busy"); do yes > /dev/null & pids+=($!); done
echo "== $(date -u +%FT%TZ) $(nproc) cores, $busy busy loops, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
	for b in "$before" "$after"; do
		echo "$(basename "$b") round $r: $("$b" bench llm --backend cpu --model "$model" -t 2 -r 2 --pp 0 --tg 32 2>&1 | grep -E '^samples' | sed 's/.*t\/s: //')"
	done
done
echo "== load $(cut -d' ' -f1-3 /proc/loadavg)"
