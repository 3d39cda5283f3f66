#!/usr/bin/env bash
# Issue 33's serve-speed comparison on the CPU: hark bench llm's tg128 chained
# against streamed chat through hark serve (official OpenAI client, temperature
# 0.7, 128 tokens, first to last streamed token), same SmolLM2-shaped q8_0
# file, same threads, one after the other on a quiet machine.
# Usage: bench/serve/speed-cpu.sh HARK_BINARY [THREADS] > log
set -euo pipefail
hark=$(realpath "$1"); threads=${2:-2}
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d); trap 'kill $srv 2>/dev/null || true; rm -rf "$dir"' EXIT
echo "== $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $("$hark" --version)"
echo "== hark bench llm (writes the file, then measures)"
"$hark" bench llm --backend cpu --dir "$dir/m" --type q8_0 -t "$threads" -r 5 --pp 0 --tg 128 --chain 2>&1 | grep -vE '^  '
mkdir -p "$dir/models"; f=$(ls "$dir"/m/*q8_0.gguf); ln -s "$f" "$dir/models/smollm2-shape-q8_0.gguf"
echo "== hark serve, streamed chat through the official openai client"
"$hark" serve --models-dir "$dir/models" --backend cpu --threads "$threads" --addr 127.0.0.1:18089 > "$dir/serve.log" 2>&1 &
srv=$!
for _ in $(seq 100); do curl -sf http://127.0.0.1:18089/v1/models > /dev/null && break; sleep 0.2; done
curl -s http://127.0.0.1:18089/v1/models; echo
node "$root/serve/testdata/openai-client/stream-speed.mjs" http://127.0.0.1:18089 smollm2-shape-q8_0 5 128
echo "== load $(cut -d' ' -f1-3 /proc/loadavg)"
