#!/usr/bin/env bash
# mem37: pp512 alone (-r 2) for several hark binaries in turn, ROUNDS
# times, the order rotating each round; the samples and user CPU of each.
# Usage: abc.sh MODEL.gguf ROUNDS BIN... > log
set -euo pipefail
model=$1; rounds=$2; shift 2
bins=("$@")
echo "== $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
	for i in "${!bins[@]}"; do
		b=${bins[$(( (i + r) % ${#bins[@]} ))]}
		out=$(/usr/bin/time -f 'time user %U s' "$b" bench llm --backend cpu --model "$model" -t 2 -r 2 --pp 512 --tg 0 2>&1)
		echo "$(basename "$b") round $r: $(echo "$out" | grep -E '^samples|^time' | sed 's/.*t\/s: /t\/s /' | tr '\n' ' ')"
	done
done
echo "== load $(cut -d' ' -f1-3 /proc/loadavg)"
