#!/usr/bin/env bash
# The server's garbage collections during chats: hark serve under GODEBUG=gctrace=1, a warm-up chat, then four more
# through the official client; counts the gc lines after each and shows the last (the live heap and its goal).
# Usage (repository root): gctrace.sh HARK > log
set -euo pipefail
hark=$(realpath "$1"); root=$(pwd); DIR=${DIR:-/tmp/a33/models}; PORT=${PORT:-18095}
srv=; trap '[ -n "$srv" ] && kill $srv 2>/dev/null || true' EXIT
GODEBUG=gctrace=1 . bench/serve/20261203-a33s28/serve-up.sh
sleep 0.5; echo "gc lines after the load: $(grep -c '^gc ' "$DIR/serve-$PORT.log")"
node "$root/serve/testdata/openai-client/stream-speed.mjs" http://127.0.0.1:$PORT smollm2-shape-q8_0 0 128 | grep '^run'
echo "after the first chat: $(grep -c '^gc ' "$DIR/serve-$PORT.log")"
node "$root/serve/testdata/openai-client/stream-speed.mjs" http://127.0.0.1:$PORT smollm2-shape-q8_0 3 128 | grep '^run'
echo "after four more: $(grep -c '^gc ' "$DIR/serve-$PORT.log")"
kill -INT $srv; wait $srv || true; srv=
grep '^gc ' "$DIR/serve-$PORT.log" | tail -2
