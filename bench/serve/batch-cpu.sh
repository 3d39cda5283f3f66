#!/usr/bin/env bash
# Issue 38's CPU measure: hark bench serve against hark serve on the
# SmolLM2-shaped q8_0 file (written by hark bench llm), 128 prompt + 128
# generated tokens a request, temperature 0.7, 1 then 4 concurrent streams.
# A request may take 30 minutes (--timeout): on a loaded machine 4 streams
# of 128 tokens take longer than the default 10.
# Usage: bench/serve/batch-cpu.sh HARK_BINARY MODEL.gguf [THREADS] [LEVELS] > log
set -euo pipefail
hark=$(realpath "$1"); model=$(realpath "$2"); threads=${3:-2}; levels=${4:-1,4}
dir=$(mktemp -d); trap 'kill $srv 2>/dev/null || true; rm -rf "$dir"' EXIT
echo "== $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $("$hark" --version)"
mkdir -p "$dir/models"; ln -s "$model" "$dir/models/smollm2-shape-q8_0.gguf"
"$hark" serve --models-dir "$dir/models" --backend cpu --threads "$threads" --timeout 30m --stream-interval 0 --addr 127.0.0.1:18091 > "$dir/serve.log" 2>&1 &
srv=$!
for _ in $(seq 100); do curl -sf http://127.0.0.1:18091/v1/models > /dev/null && break; sleep 0.2; done
echo "== hark bench serve --concurrency $levels --prompt-tokens 128 --max-tokens 128 --temperature 0.7"
"$hark" bench serve --url http://127.0.0.1:18091 --model smollm2-shape-q8_0 --concurrency "$levels" --prompt-tokens 128 --max-tokens 128 --temperature 0.7 2>&1
echo "== load $(cut -d' ' -f1-3 /proc/loadavg)"
