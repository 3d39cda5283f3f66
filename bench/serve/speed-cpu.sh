#!/usr/bin/env bash
# Issue 33's serve-speed comparison on the CPU: hark bench llm's tg128 chained
# against streamed chat through hark serve (official OpenAI client, temperature
# 0.7, 128 tokens, first to last streamed token), same SmolLM2-shaped q8_0
# file, same threads, on a quiet machine.
# Usage: bench/serve/speed-cpu.sh HARK_BINARY [THREADS [ROUNDS]] > log
# CLIENT_PREFIX (environment) runs the client under a command, e.g. "nice -n 19"
# to see what the client's own CPU time on the server's cores costs it.
# SERVE_ARGS (environment) adds flags to hark serve, e.g. "--stream-interval 0".
# Without ROUNDS: five bench samples, then five chats. With ROUNDS: that many
# rounds of one bench sample and one chat (each after its own warm-up), the
# order swapped every round, because this VM's clock drifts over minutes of
# load and the one-block order let the drift fall on the chat alone.
set -euo pipefail
hark=$(realpath "$1"); threads=${2:-2}; rounds=${3:-0}
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d); trap 'kill $srv 2>/dev/null || true; rm -rf "$dir"' EXIT
echo "== $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $("$hark" --version)"
echo "== hark bench llm (writes the file, then measures)"
reps=5; [ "$rounds" -gt 0 ] && reps=1
"$hark" bench llm --backend cpu --dir "$dir/m" --type q8_0 -t "$threads" -r $reps --pp 0 --tg 128 --chain 2>&1 | grep -vE '^  '
mkdir -p "$dir/models"; f=$(ls "$dir"/m/*q8_0.gguf); ln -s "$f" "$dir/models/smollm2-shape-q8_0.gguf"
echo "== hark serve, streamed chat through the official openai client${CLIENT_PREFIX:+ (under: $CLIENT_PREFIX)}"
"$hark" serve --models-dir "$dir/models" --backend cpu --threads "$threads" --addr 127.0.0.1:18089 ${SERVE_ARGS:-} > "$dir/serve.log" 2>&1 &
srv=$!
for _ in $(seq 100); do curl -sf http://127.0.0.1:18089/v1/models > /dev/null && break; sleep 0.2; done
curl -s http://127.0.0.1:18089/v1/models; echo
chat() { ${CLIENT_PREFIX:-} node "$root/serve/testdata/openai-client/stream-speed.mjs" http://127.0.0.1:18089 smollm2-shape-q8_0 "$1" 128; }
if [ "$rounds" -eq 0 ]; then
	chat 5
else
	bench() { "$hark" bench llm --backend cpu --model "$f" -t "$threads" -r 1 --pp 0 --tg 128 --chain 2>&1 | grep -E '^samples.*chained'; }
	for r in $(seq "$rounds"); do
		echo "== round $r, load $(cut -d' ' -f1-3 /proc/loadavg)"
		if [ $((r % 2)) -eq 1 ]; then bench; chat 1; else chat 1; bench; fi
	done | tee "$dir/rounds.log"
	# medians of each side's timed samples, and their ratio
	awk '/^== round/ {r++} /^samples.*chained/ {b[nb++]=$NF; rb[r]=$NF} /^run 1:/ {c[nc++]=$(NF-1); rc[r]=$(NF-1); if ((i = index($0, " ms a token)"))) { v = substr($0, 1, i - 1); sub(/.*\(/, "", v); u[nu++] = v + 0 } }
		function med(a, n,   i, j, t) { for (i=0;i<n;i++) for (j=i+1;j<n;j++) if (a[j]<a[i]) {t=a[i];a[i]=a[j];a[j]=t}
			return n%2 ? a[(n-1)/2] : (a[n/2-1]+a[n/2])/2 }
		END { mb=med(b,nb); mc=med(c,nc); printf "== medians: bench tg128 chained %.2f tok/s (%d), chat %.2f tok/s (%d), ratio %.3f\n", mb, nb, mc, nc, mc/mb
			# the chat of each round against its own bench, taken seconds apart: the speed of this VM drifts by 10-20% within
			# a minute (BENCHMARKS.md, "Serve on the CPU, round 29"), so the paired ratio is the steadier figure
			for (k = 1; k <= r; k++) if (rb[k] > 0 && rc[k] > 0) p[np++] = rc[k] / rb[k]
			if (np) printf "== per-round chat / bench (the two samples of each round): median %.3f (%d rounds)\n", med(p, np), np
			if (nu) printf "== median client CPU a streamed token (the client process, first token to last): %.3f ms (%d)\n", med(u,nu), nu }' "$dir/rounds.log"
fi
echo "== load $(cut -d' ' -f1-3 /proc/loadavg)"
