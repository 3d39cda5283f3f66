#!/usr/bin/env bash
# CPU time per token, one worker thread (no spinning pool: CPU time is the
# work, whatever else the machine runs), for a loaded shared machine where
# wall-clock ratios mean nothing:
#   serve: hark serve --threads 1's user+sys time over stream-speed.mjs's
#     4 streamed chats of 128 tokens (temperature 0.7; their prefill of the
#     ~35-token prompt included), over 512;
#   bench: hark bench llm -t 1 --chain's user+sys time with --tg 256 less
#     with --tg 128, over 512 (tg and tg chained, a warm-up and one
#     repetition each: 4 × 128 more tokens, greedy).
# Usage: cputime.sh HARK MODEL.gguf
set -euo pipefail
hark=$(realpath "$1"); model=$(realpath "$2")
root=$(cd "$(dirname "$0")/../../.." && pwd)
tck=$(getconf CLK_TCK)
cpu() { awk -v t="$tck" '{ print ($14 + $15) / t }' "/proc/$1/stat"; }
dir=$(mktemp -d); mkdir "$dir/models"; ln -s "$model" "$dir/models/smollm2-shape-q8_0.gguf"
"$hark" serve --models-dir "$dir/models" --backend cpu --threads 1 --addr 127.0.0.1:18192 > "$dir/serve.log" 2>&1 &
srv=$!; trap 'kill $srv 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 200); do curl -sf http://127.0.0.1:18192/v1/models > /dev/null && break; sleep 0.3; done
curl -s http://127.0.0.1:18192/v1/chat/completions -H 'Content-Type: application/json' \
  -d '{"model":"smollm2-shape-q8_0","messages":[{"role":"user","content":"hi"}],"max_tokens":2}' > /dev/null
c0=$(cpu $srv)
node "$root/serve/testdata/openai-client/stream-speed.mjs" http://127.0.0.1:18192 smollm2-shape-q8_0 3 128 | tail -1
c1=$(cpu $srv)
echo "serve: $(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.2f ms CPU a token (%.2f s over 512)", (b-a)/512*1000, b-a }')"
kill $srv
bt() { /usr/bin/time -f '%U %S' "$hark" bench llm --backend cpu --model "$model" -t 1 -r 1 --pp 0 --tg "$1" --chain 2>&1 >/dev/null | tail -1 | awk '{ print $1 + $2 }'; }
b1=$(bt 128); b2=$(bt 256)
echo "bench: $(awk -v a="$b1" -v b="$b2" 'BEGIN { printf "%.2f ms CPU a token (%.2f s - %.2f s over 512)", (b-a)/512*1000, b, a }')"
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
