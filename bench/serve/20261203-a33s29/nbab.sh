#!/usr/bin/env bash
# The batch engine's cost for one stream: two servers side by side, A (the default: the continuous-batching engine, paged
# KV) and B (SERVE_ARGS_B, default --no-batch: the plain generator; ENV_B: its environment), and per round the same unstreamed request to each
# (decomp.sh's "nostream": 127 / (T128 - T1), seed 2, temperature 0.7, the order swapped every round) and the sampled
# bench at the chat's depth (--temp 0.7 --ctx 4096 --depth 35). Lines end with foreign N% (a33s28's quiet.sh).
# Usage (root): AUTOGROUP_NICE=-20 setsid nbab.sh HARK [ROUNDS] > log
set -uo pipefail
hark=$(realpath "$1"); rounds=${2:-30}; DIR=${DIR:-/tmp/a33s29}
. bench/serve/20261203-a33s28/quiet.sh
[ -n "${AUTOGROUP_NICE:-}" ] && echo "$AUTOGROUP_NICE" > /proc/self/autogroup
sa=; sb=; trap 'kill $sa $sb 2>/dev/null || true' EXIT
PORT=18331 SERVE_ARGS=; . bench/serve/20261203-a33s28/serve-up.sh; sa=$srv
PORT=18332 SERVE_ARGS=${SERVE_ARGS_B---no-batch} SERVE_PREFIX="env ${ENV_B:-B=1}"; . bench/serve/20261203-a33s28/serve-up.sh; sb=$srv
kill -0 $sa && kill -0 $sb || { echo "nbab.sh: a server did not start" >&2; exit 1; }
echo "== $(date -u +%FT%TZ) A: default; B: ${SERVE_ARGS_B---no-batch} ${ENV_B:-}; $(cat /proc/self/autogroup)"
req() { curl -s -o "$DIR/resp-$1.json" -w '%{time_total}' http://127.0.0.1:$1/v1/chat/completions -H 'Content-Type: application/json' \
	-d "{\"model\":\"smollm2-shape-q8_0\",\"messages\":[{\"role\":\"user\",\"content\":\"Once upon a time\"}],\"max_tokens\":$2,\"temperature\":0.7,\"seed\":2}"; }
nostream() { local t1 t128 n; t1=$(req $1 1); t128=$(req $1 128); n=$(grep -o '"completion_tokens":[0-9]*' "$DIR/resp-$1.json" | cut -d: -f2)
	awk -v a="$t1" -v b="$t128" -v n="$n" 'BEGIN { printf "T1 %.1f ms, T128 %.1f ms, %d tokens, %.2f tok/s\n", a * 1000, b * 1000, n, (n - 1) / (b - a) }'; }
A() { echo "A $(nostream 18331)"; }
B() { echo "B $(nostream 18332)"; }
sampled() { echo "sampled $("$hark" bench llm --backend cpu --model "$f" -t 2 -r 1 --pp 0 --tg 128 --chain --temp 0.7 --ctx 4096 --depth 35 2>&1 | awk '/^samples.*chained/ {print $NF}')"; }
req 18331 128 > /dev/null; req 18332 128 > /dev/null # warm both
for r in $(seq "$rounds"); do
	echo "== round $r, load $(cut -d' ' -f1-3 /proc/loadavg)"
	if [ $((r % 2)) -eq 1 ]; then srv=$sa; foreign A; srv=$sb; foreign B; srv=; foreign sampled
	else srv=; foreign sampled; srv=$sb; foreign B; srv=$sa; foreign A; fi
done
echo "== end $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
