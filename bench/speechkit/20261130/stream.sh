#!/usr/bin/env bash
# stream.sh HARK MODEL OUTDIR (from the repository root)
# The issue's streaming benchmark on the speechkit model: `hark stream` plays the
# 613.9-s evaluation passage in real time (--speed 1, 100-ms chunks) on the CPU
# with 2 threads; `hark transcribe` (greedy, no fallback) gives the offline
# transcript of the same file; analyze.py computes the figures.
set -euo pipefail
hark=$1 model=$2 out=$3
p=testdata/speechkit/passage.flac
mkdir -p "$out"
uptime > "$out/uptime-before.txt"
"$hark" stream --json --threads 2 --backend cpu --model "$model" "$p" > "$out/stream.jsonl"
uptime > "$out/uptime-after.txt"
"$hark" transcribe --beam 1 --no-fallback --threads 2 --backend cpu --model "$model" "$p" > "$out/offline.txt"
python3 "$(dirname "$0")/analyze.py" "$out/stream.jsonl" "$out/offline.txt" testdata/speechkit/eval.json | tee "$out/figures.txt"
