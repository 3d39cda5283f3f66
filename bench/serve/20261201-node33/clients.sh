#!/usr/bin/env bash
# The same hark serve, streamed chat through the official Node client
# (stream-speed.mjs) and through the Go client (bench/serve/streamspeed), one
# request each a round after its own warm-up, with hark bench llm's tg128 chained
# between, order swapped every round (node33): how much of the chat's gap to the
# bench is the Node client's.
# Usage: clients.sh HARK STREAMSPEED_BINARY MODEL.gguf ROUNDS > log
set -euo pipefail
hark=$(realpath "$1"); ss=$(realpath "$2"); f=$(realpath "$3"); rounds=$4
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../.." && pwd)
. "$here/serve-up.sh"
serve_up "$hark" "$f" 18145
bench() { echo "bench load $(load): $("$hark" bench llm --backend cpu --model "$f" -t 2 -r 1 --pp 0 --tg 128 --chain 2>&1 | grep -E '^samples.*chained' | awk '{print $NF}') tok/s"; }
node_() { echo "node load $(load): $(node "$root/serve/testdata/openai-client/stream-speed.mjs" http://127.0.0.1:18145 smollm2-shape-q8_0 1 128 | grep -E '^run 1:')"; }
go_() { echo "go load $(load): $("$ss" -url http://127.0.0.1:18145 -model smollm2-shape-q8_0 -reps 1 2>&1 | tail -1)"; }
for r in $(seq "$rounds"); do
	echo "== round $r"
	if [ $((r % 2)) -eq 1 ]; then bench; node_; go_; else go_; node_; bench; fi
done
