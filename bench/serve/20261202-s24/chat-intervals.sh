#!/usr/bin/env bash
# Issue #33: streamed chat through the official client against three hark serve
# side by side, --stream-interval 0 (every token written at once), 20ms (the
# default) and 50ms, one chat each a round, the order rotated every round, so the
# machine's drift falls on all three alike. Same binary, same SmolLM2-shaped q8_0
# file (hark bench llm writes it), 2 threads each (only one server works at a time).
# Usage: bench/serve/20261202-s24/chat-intervals.sh HARK [ROUNDS] > log
set -euo pipefail
hark=$(realpath "$1"); rounds=${2:-12}
root=$(cd "$(dirname "$0")/../../.." && pwd)
dir=$(mktemp -d); pids=(); trap 'kill ${pids[@]} 2>/dev/null || true; rm -rf "$dir"' EXIT
echo "== $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$hark" bench llm --backend cpu --dir "$dir/m" --type q8_0 -t 2 -r 1 --pp 0 --tg 16 > /dev/null 2>&1
mkdir -p "$dir/models"; ln -s "$(ls "$dir"/m/*q8_0.gguf)" "$dir/models/smollm2-shape-q8_0.gguf"
ivs=(0 20ms 50ms); ports=(18301 18302 18303)
for i in 0 1 2; do
	"$hark" serve --models-dir "$dir/models" --backend cpu --threads 2 --stream-interval "${ivs[$i]}" --addr 127.0.0.1:${ports[$i]} > "$dir/serve-$i.log" 2>&1 &
	pids+=($!)
done
for p in "${ports[@]}"; do for _ in $(seq 100); do curl -sf http://127.0.0.1:$p/v1/models > /dev/null && break; sleep 0.2; done; done
chat() { node "$root/serve/testdata/openai-client/stream-speed.mjs" http://127.0.0.1:$1 smollm2-shape-q8_0 1 128 | grep '^run 1'; }
for p in "${ports[@]}"; do chat $p > /dev/null; done # each loads its model and warms
for r in $(seq "$rounds"); do
	for k in 0 1 2; do i=$(( (r + k) % 3 )); echo "round $r interval ${ivs[$i]}: $(chat ${ports[$i]})"; done
done | tee "$dir/rounds.log"
awk '{ iv = $4; sub(":", "", iv); v[iv] = v[iv] " " $(NF-1); c = $0; sub(/ ms a token.*/, "", c); sub(/.*\(/, "", c); u[iv] = u[iv] " " c }
	function med(s,   a, n, i, j, t) { n = split(s, a, " "); for (i=1;i<=n;i++) for (j=i+1;j<=n;j++) if (a[j]+0<a[i]+0) {t=a[i];a[i]=a[j];a[j]=t}
		return n%2 ? a[(n+1)/2] : (a[n/2]+a[n/2+1])/2 }
	END { for (k in v) printf "== interval %s: median chat %.2f tok/s, median client CPU %.3f ms a token\n", k, med(v[k]), med(u[k]) }' "$dir/rounds.log" | sort
echo "== load $(cut -d' ' -f1-3 /proc/loadavg)"
