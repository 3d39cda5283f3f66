#!/usr/bin/env bash
# The serve profiles of this folder: hark serve with THREADS workers on
# the SmolLM2-shaped q8_0 file MODEL (hark bench llm writes it), one short
# warm-up request, then perf (cpu-clock, call graphs) over
# stream-speed.mjs's two 128-token streamed chats (a warm-up and one run).
# Usage: profile-serve.sh HARK MODEL.gguf THREADS OUT.data
set -euo pipefail
hark=$(realpath "$1"); model=$(realpath "$2"); th=$3; out=$4
root=$(cd "$(dirname "$0")/../../.." && pwd)
dir=$(mktemp -d); mkdir "$dir/models"; ln -s "$model" "$dir/models/smollm2-shape-q8_0.gguf"
"$hark" serve --models-dir "$dir/models" --backend cpu --threads "$th" --addr 127.0.0.1:18190 > "$dir/serve.log" 2>&1 &
srv=$!; trap 'kill $srv 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 200); do curl -sf http://127.0.0.1:18190/v1/models > /dev/null && break; sleep 0.3; done
curl -s http://127.0.0.1:18190/v1/chat/completions -H 'Content-Type: application/json' \
  -d '{"model":"smollm2-shape-q8_0","messages":[{"role":"user","content":"hi"}],"max_tokens":2}' > /dev/null
perf record -e cpu-clock -F 4000 -g -o "$out" -p "$srv" 2> "$dir/perf.err" &
pf=$!
sleep 1
node "$root/serve/testdata/openai-client/stream-speed.mjs" http://127.0.0.1:18190 smollm2-shape-q8_0 1 128
kill -INT $pf; wait $pf || true
