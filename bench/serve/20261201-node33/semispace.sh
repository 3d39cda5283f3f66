#!/usr/bin/env bash
# The L3 reading, tested (node33): the same hark serve, streamed chat through
# the official Node client as it comes and with V8's young generation held to
# 1 MiB (--max-semi-space-size=1: the client's allocations cycle through far
# less memory), and through the Go client, one request each a round after its
# own warm-up, the order rotated every round.
# Usage: semispace.sh HARK STREAMSPEED_BINARY MODEL.gguf ROUNDS > log
set -euo pipefail
hark=$(realpath "$1"); ss=$(realpath "$2"); f=$(realpath "$3"); rounds=$4
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../.." && pwd)
. "$here/serve-up.sh"
serve_up "$hark" "$f" 18146
n() { echo "node$1 load $(load): $(node $2 "$root/serve/testdata/openai-client/stream-speed.mjs" http://127.0.0.1:18146 smollm2-shape-q8_0 1 128 | grep -E '^run 1:')"; }
g() { echo "go load $(load): $("$ss" -url http://127.0.0.1:18146 -model smollm2-shape-q8_0 -reps 1 2>&1 | tail -1)"; }
for r in $(seq "$rounds"); do
	echo "== round $r"
	case $((r % 3)) in
	1) n "" ""; n " semi1" --max-semi-space-size=1; g ;;
	2) n " semi1" --max-semi-space-size=1; g; n "" "" ;;
	0) g; n "" ""; n " semi1" --max-semi-space-size=1 ;;
	esac
done
