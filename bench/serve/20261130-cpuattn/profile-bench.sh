#!/usr/bin/env bash
# The bench side of this folder's profiles: perf (cpu-clock, call graphs)
# over hark bench llm's greedy tg128 chained on the SmolLM2-shaped q8_0 file
# MODEL with 1 worker, at the chat prompt's depth and serve's context
# (--depth 35 --ctx 4096), as 20261129-s8-ratio's bench profiles.
# Usage: profile-bench.sh HARK MODEL.gguf OUT.data
set -euo pipefail
hark=$(realpath "$1"); model=$(realpath "$2"); out=$3
perf record -e cpu-clock -F 4000 -g -o "$out" -- \
  "$hark" bench llm --backend cpu --model "$model" -t 1 -r 2 --pp 0 --tg 128 --chain --depth 35 --ctx 4096 2>&1 | grep -E 'tg128|samples'
