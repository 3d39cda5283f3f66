#!/usr/bin/env bash
# The official client's own CPU time a streamed token (node33), against a fake
# SSE server (fake-sse.go.txt: events 13 ms apart, as a 77 tok/s chat), so no
# model shares the cores: the openai package (stream-speed.mjs) against Node's
# fetch alone (raw-fetch.mjs), the server's event as it is ("full") against one
# without its null fields ("lean"), and events 50 µs apart ("burst", so one
# socket read carries several). Each line carries the load average.
# Usage: client-cpu.sh [REPS] > log
set -euo pipefail
reps=${1:-4}
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../.." && pwd)
dir=$(mktemp -d); cp "$here/fake-sse.go.txt" "$dir/main.go"; printf 'module fakesse\ngo 1.26\n' > "$dir/go.mod"
(cd "$dir" && go build -o fake .)
"$dir/fake" 18143 & srv=$!; trap 'kill $srv 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:18143/ && break; sleep 0.1; done
echo "== $(date -u +%FT%TZ) $(nproc) cores, node $(node --version)"
for round in 1 2; do
	for m in full lean burst; do
		echo "== round $round, openai package, $m, load $(cut -d' ' -f1 /proc/loadavg)"
		node "$root/serve/testdata/openai-client/stream-speed.mjs" http://127.0.0.1:18143 $m "$reps" 128 | grep -E '^run [1-9]'
		echo "== round $round, fetch alone, $m, load $(cut -d' ' -f1 /proc/loadavg)"
		node "$here/raw-fetch.mjs" http://127.0.0.1:18143 $m "$reps" 128
	done
done
