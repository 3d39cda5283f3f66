#!/usr/bin/env bash
# Two builds side by side: hark serve from HARK_A and from HARK_B (the same flags), and per round one streamed chat through
# the official client against each (the issue's: temperature 0.7, 128 tokens, first streamed token to last; order swapped
# every round) and one greedy tg128 chained bench (HARK_A's; the issue's reference; with BENCH_B=1 HARK_B's too, as
# greedyB), each line with its foreign share (a33s28's quiet.sh). ENV_A and ENV_B (VAR=VALUE) set a server's environment
# (round 30; its experiment knobs). Read with abbinstat.sh. Usage (root):
# AUTOGROUP_NICE=-20 setsid abbin.sh HARK_A HARK_B [ROUNDS] > log
set -uo pipefail
ha=$(realpath "$1"); hb=$(realpath "$2"); rounds=${3:-20}; root=$(pwd); DIR=${DIR:-/tmp/a33s29}
. bench/serve/20261203-a33s28/quiet.sh
[ -n "${AUTOGROUP_NICE:-}" ] && echo "$AUTOGROUP_NICE" > /proc/self/autogroup
sa=; sb=; trap 'kill $sa $sb 2>/dev/null || true' EXIT
hark=$ha PORT=18351 SERVE_ARGS= SERVE_PREFIX="env ${ENV_A:-A=1}"; . bench/serve/20261203-a33s28/serve-up.sh; sa=$srv
hark=$hb PORT=18352 SERVE_ARGS= SERVE_PREFIX="env ${ENV_B:-B=1}"; . bench/serve/20261203-a33s28/serve-up.sh; sb=$srv
hark=$ha
kill -0 $sa && kill -0 $sb || { echo "abbin.sh: a server did not start" >&2; exit 1; }
echo "== $(date -u +%FT%TZ) A: $ha ${ENV_A:-}; B: $hb ${ENV_B:-}; $(cat /proc/self/autogroup)"
chat() { HARK_PID=$1 node "$root/serve/testdata/openai-client/stream-speed.mjs" http://127.0.0.1:$2 smollm2-shape-q8_0 1 128 | awk '/^run 1:/ {sub(/^run 1: /, ""); print}'; }
chatA() { echo "chatA $(chat $sa 18351)"; }
chatB() { echo "chatB $(chat $sb 18352)"; }
greedyB() { echo "greedyB $("$hb" bench llm --backend cpu --model "$f" -t 2 -r 1 --pp 0 --tg 128 --chain 2>&1 | awk '/^samples.*chained/ {print $NF}')"; }
greedy() { echo "greedy $("$ha" bench llm --backend cpu --model "$f" -t 2 -r 1 --pp 0 --tg 128 --chain 2>&1 | awk '/^samples.*chained/ {print $NF}')"; }
for r in $(seq "$rounds"); do
	echo "== round $r, load $(cut -d' ' -f1-3 /proc/loadavg)"
	if [ $((r % 2)) -eq 1 ]; then srv=$sa; foreign chatA; srv=$sb; foreign chatB; srv=; foreign greedy; [ -n "${BENCH_B:-}" ] && foreign greedyB
	else srv=; [ -n "${BENCH_B:-}" ] && foreign greedyB; foreign greedy; srv=$sb; foreign chatB; srv=$sa; foreign chatA; fi
done
echo "== end $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
