#!/usr/bin/env bash
# Rounds of: the greedy tg128 chained bench, the same sampled (temperature 0.7, --ctx 4096 --depth 35: the chat's
# sampler, context and depth) and one streamed chat through the official client (its own node process, one warm-up
# run then one timed), the order rotated, each round after a quiet gate (quiet.sh: 90% idle CPUs over 2 s, tried for
# GATE s at a time; rounds stop at DEADLINE, epoch seconds, when set). The chat's line has the server's and the client's schedstat (HARK_PID): time on a CPU and time
# runnable but waiting for one, first token to last. Each line ends with "foreign N%": the share of the CPUs other
# processes took during it (quiet.sh's foreign), to tell the samples other helpers' work reached. SERVE_ARGS adds flags to hark serve; CLIENT_PREFIX runs the client
# under a command. Usage (repository root): rounds.sh HARK [ROUNDS] > log
set -euo pipefail
hark=$(realpath "$1"); rounds=${2:-6}; root=$(pwd); GATE=${GATE:-120}
DIR=${DIR:-/tmp/a33/models}; PORT=${PORT:-18096}
. bench/serve/20261203-a33s28/quiet.sh
# AUTOGROUP_NICE (e.g. -10; run the script under setsid, so its session is an autogroup of its own): this kernel
# shares the CPUs between sessions (autogroups) before nice values count, so the script sets its session's nice, and
# the benches, the server and the client then take the cores ahead of other sessions' builds, while among themselves
# they compete as they come. PAUSE s between rounds give the other sessions the cores back.
if [ -n "${AUTOGROUP_NICE:-}" ]; then echo "$AUTOGROUP_NICE" > /proc/self/autogroup; fi
# ALL_PREFIX (e.g. "nice -n -10") runs the benches, the server and the client alike under a command: on a machine
# other helpers load, all three then take the cores first, while among themselves they compete as they come.
SERVE_PREFIX=${ALL_PREFIX:-}; ap=${ALL_PREFIX:-}
srv=; trap '[ -n "$srv" ] && kill $srv 2>/dev/null || true' EXIT
. bench/serve/20261203-a33s28/serve-up.sh
echo "== $(date -u +%FT%TZ) $("$hark" --version | head -1) SERVE_ARGS=${SERVE_ARGS:-} CLIENT_PREFIX=${CLIENT_PREFIX:-} ALL_PREFIX=${ALL_PREFIX:-} GATE=$GATE $(cat /proc/self/autogroup) PAUSE=${PAUSE:-0}"
greedy() { echo "greedy $($ap "$hark" bench llm --backend cpu --model "$f" -t 2 -r 1 --pp 0 --tg 128 --chain 2>&1 | awk '/^samples.*chained/ {print $NF}')"; }
sampled() { echo "sampled $($ap "$hark" bench llm --backend cpu --model "$f" -t 2 -r 1 --pp 0 --tg 128 --chain --temp 0.7 --ctx 4096 --depth 35 2>&1 | awk '/^samples.*chained/ {print $NF}')"; }
chat() { HARK_PID=$srv $ap ${CLIENT_PREFIX:-} node "$root/serve/testdata/openai-client/stream-speed.mjs" http://127.0.0.1:$PORT smollm2-shape-q8_0 1 128 | awk '/^run 1:/ {sub(/^run 1: /, ""); print "chat " $0}'; }
# a round runs only after the gate found the CPUs quiet; rounds stop at DEADLINE (epoch s) if set
r=0
while [ $r -lt "$rounds" ]; do
	[ -n "${DEADLINE:-}" ] && [ "$(date +%s)" -ge "$DEADLINE" ] && { echo "== deadline: $r rounds"; break; }
	if [ "$GATE" = 0 ]; then q="no gate"; elif ! q=$(quiet "$GATE"); then echo "== not quiet ($q, load $(cut -d' ' -f1-3 /proc/loadavg)), waiting"; continue; fi
	r=$((r + 1))
	[ $r -gt 1 ] && sleep "${PAUSE:-0}"
	echo "== round $r, $q, load $(cut -d' ' -f1-3 /proc/loadavg)"
	case $((r % 3)) in 1) foreign greedy; foreign sampled; foreign chat;; 2) foreign sampled; foreign chat; foreign greedy;; 0) foreign chat; foreign greedy; foreign sampled;; esac
done
echo "== load $(cut -d' ' -f1-3 /proc/loadavg)"
