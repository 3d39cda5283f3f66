#!/usr/bin/env bash
# Two hark serve side by side, A (SERVE_ARGS_A, ENV_A) and B (SERVE_ARGS_B, ENV_B), and per round one streamed chat
# through the official client against each (order swapped every round), one sampled bench (temperature 0.7,
# --ctx 4096 --depth 35) and one greedy bench (tg128 chained, the issue's reference), each line with its foreign share (quiet.sh). AUTOGROUP_NICE, PAUSE and DEADLINE as
# rounds.sh (run under setsid). Usage (repository root): ab.sh HARK [ROUNDS] > log
set -euo pipefail
hark=$(realpath "$1"); rounds=${2:-20}; root=$(pwd)
DIR=${DIR:-/tmp/a33/models}
. bench/serve/20261203-a33s28/quiet.sh
if [ -n "${AUTOGROUP_NICE:-}" ]; then echo "$AUTOGROUP_NICE" > /proc/self/autogroup; fi
sa=; sb=; trap 'kill $sa $sb 2>/dev/null || true' EXIT
PORT=18101 SERVE_ARGS=${SERVE_ARGS_A:-} SERVE_PREFIX="env ${ENV_A:-A=1}"; . bench/serve/20261203-a33s28/serve-up.sh; sa=$srv
PORT=18102 SERVE_ARGS=${SERVE_ARGS_B:-} SERVE_PREFIX="env ${ENV_B:-B=1}"; . bench/serve/20261203-a33s28/serve-up.sh; sb=$srv
echo "== $(date -u +%FT%TZ) A: ${SERVE_ARGS_A:-} ${ENV_A:-}; B: ${SERVE_ARGS_B:-} ${ENV_B:-}; $(cat /proc/self/autogroup) PAUSE=${PAUSE:-0}"
chat() { local s=$1 port=$2; srv=$s; HARK_PID=$s node "$root/serve/testdata/openai-client/stream-speed.mjs" http://127.0.0.1:$port smollm2-shape-q8_0 1 128 | awk '/^run 1:/ {sub(/^run 1: /, ""); print}'; }
chatA() { echo "chatA $(chat $sa 18101)"; }
chatB() { echo "chatB $(chat $sb 18102)"; }
sampled() { srv=; echo "sampled $("$hark" bench llm --backend cpu --model "$f" -t 2 -r 1 --pp 0 --tg 128 --chain --temp 0.7 --ctx 4096 --depth 35 2>&1 | awk '/^samples.*chained/ {print $NF}')"; }
greedy() { srv=; echo "greedy $("$hark" bench llm --backend cpu --model "$f" -t 2 -r 1 --pp 0 --tg 128 --chain 2>&1 | awk '/^samples.*chained/ {print $NF}')"; }
for r in $(seq "$rounds"); do
	[ -n "${DEADLINE:-}" ] && [ "$(date +%s)" -ge "$DEADLINE" ] && { echo "== deadline: $((r - 1)) rounds"; break; }
	[ $r -gt 1 ] && sleep "${PAUSE:-0}"
	echo "== round $r, load $(cut -d' ' -f1-3 /proc/loadavg)"
	if [ $((r % 2)) -eq 1 ]; then srv=$sa; foreign chatA; srv=$sb; foreign chatB; srv=; foreign sampled; foreign greedy
	else srv=; foreign greedy; foreign sampled; srv=$sb; foreign chatB; srv=$sa; foreign chatA; fi
done
echo "== load $(cut -d' ' -f1-3 /proc/loadavg)"
