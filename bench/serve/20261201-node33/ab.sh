#!/usr/bin/env bash
# Two hark builds A and B side by side on one machine (issue 33's CPU serve check,
# node33): per round, hark bench llm's tg128 chained with each build, then one
# streamed chat (the official client, stream-speed.mjs, 128 tokens, temperature
# 0.7, after its own warm-up request) against each build's hark serve, the order
# swapped every round; each line carries the load average. The process CPU time
# of each bench (user+sys, /usr/bin/time) is logged too.
# Usage: ab.sh HARK_A HARK_B MODEL.gguf ROUNDS [THREADS] > log
set -euo pipefail
a=$(realpath "$1"); b=$(realpath "$2"); f=$(realpath "$3"); rounds=$4; threads=${5:-2}
root=$(cd "$(dirname "$0")/../../.." && pwd)
dir=$(mktemp -d); mkdir "$dir/models"; ln -s "$f" "$dir/models/smollm2-shape-q8_0.gguf"
"$a" serve --models-dir "$dir/models" --backend cpu --threads "$threads" --addr 127.0.0.1:18141 > "$dir/a.log" 2>&1 & pa=$!
"$b" serve --models-dir "$dir/models" --backend cpu --threads "$threads" --addr 127.0.0.1:18142 > "$dir/b.log" 2>&1 & pb=$!
trap 'kill $pa $pb 2>/dev/null || true; rm -rf "$dir"' EXIT
for port in 18141 18142; do for _ in $(seq 100); do curl -sf http://127.0.0.1:$port/v1/models > /dev/null && break; sleep 0.2; done; done
echo "== $(date -u +%FT%TZ) $(nproc) cores; A $("$a" --version) ($a); B $("$b" --version) ($b)"
load() { cut -d' ' -f1 /proc/loadavg; }
bench() { # $1 name, $2 binary
	local out; out=$( { /usr/bin/time -f 'cpu %U user %S sys' "$2" bench llm --backend cpu --model "$f" -t "$threads" -r 1 --pp 0 --tg 128 --chain; } 2>&1)
	echo "bench $1 load $(load): $(grep -E '^samples.*chained' <<<"$out" | awk '{print $NF}') tok/s, $(grep -E '^cpu ' <<<"$out")"
}
chat() { # $1 name, $2 port
	echo "chat $1 load $(load): $(node "$root/serve/testdata/openai-client/stream-speed.mjs" http://127.0.0.1:$2 smollm2-shape-q8_0 1 128 | grep -E '^run 1:')"
}
for r in $(seq "$rounds"); do
	echo "== round $r"
	if [ $((r % 2)) -eq 1 ]; then bench A "$a"; bench B "$b"; chat A 18141; chat B 18142
	else bench B "$b"; bench A "$a"; chat B 18142; chat A 18141; fi
done
