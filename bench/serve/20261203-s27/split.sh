#!/usr/bin/env bash
# Splits issue #33's CPU gap: per round (order rotated) the greedy tg128 chained, the same sampled at temperature 0.7
# at the chat's context and depth (--ctx 4096 --depth 35), and one streamed chat through the official client.
# Usage (repository root): bench/serve/20261203-s27/split.sh HARK [ROUNDS] > log
set -euo pipefail
hark=$(realpath "$1"); rounds=${2:-6}; root=$(pwd)
dir=$(mktemp -d); trap 'kill $srv 2>/dev/null || true; rm -rf "$dir"' EXIT
"$hark" bench llm --backend cpu --dir "$dir/m" --type q8_0 -t 2 -r 1 --pp 0 --tg 16 > /dev/null 2>&1
f=$(ls "$dir"/m/*q8_0.gguf); mkdir -p "$dir/models"; ln -s "$f" "$dir/models/smollm2-shape-q8_0.gguf"
"$hark" serve --models-dir "$dir/models" --backend cpu --threads 2 --addr 127.0.0.1:18089 > "$dir/serve.log" 2>&1 &
srv=$!
for _ in $(seq 100); do curl -sf http://127.0.0.1:18089/v1/models > /dev/null && break; sleep 0.2; done
greedy() { echo "greedy $("$hark" bench llm --backend cpu --model "$f" -t 2 -r 1 --pp 0 --tg 128 --chain 2>&1 | awk '/^samples.*chained/ {print $NF}')"; }
sampled() { echo "sampled $("$hark" bench llm --backend cpu --model "$f" -t 2 -r 1 --pp 0 --tg 128 --chain --temp 0.7 --ctx 4096 --depth 35 2>&1 | awk '/^samples.*chained/ {print $NF}')"; }
chat() { echo "chat $(node "${NODE_ROOT:-$root}/serve/testdata/openai-client/stream-speed.mjs" http://127.0.0.1:18089 smollm2-shape-q8_0 1 128 | awk '/^run 1:/ {print $(NF-1)}')"; }
for r in $(seq "$rounds"); do
	echo "== round $r, load $(cut -d' ' -f1-3 /proc/loadavg)"
	case $((r % 3)) in 1) greedy; sampled; chat;; 2) sampled; chat; greedy;; 0) chat; greedy; sampled;; esac
done | tee "$dir/r.log"
awk '{v[$1]=v[$1] " " $2} END {for (k in v) print "==", k, v[k]}' "$dir/r.log"
