#!/usr/bin/env bash
# Where the chat's time goes, in rounds of (order rotated): the greedy tg128 chained bench (the issue's reference), the
# same sampled at the chat's temperature, context and depth (--temp 0.7 --ctx 4096 --depth 35), the issue's streamed chat
# through the official client (first token to last), and the same request unstreamed through curl, twice: max_tokens 1
# and max_tokens 128 (seed 2, the chat's timed run's: the same tokens), whose difference is the server's 127 decode
# steps without a stream or a client between tokens ("nostream" = 127 / (T128 - T1)). One server for the whole run.
# Each line ends with foreign N% (a33s28's quiet.sh); GATE=S waits up to S s before each round for 90%-idle CPUs. Usage (root): AUTOGROUP_NICE=-20 setsid decomp.sh HARK [ROUNDS] > log
set -uo pipefail
hark=$(realpath "$1"); rounds=${2:-12}; root=$(pwd); DIR=${DIR:-/tmp/a33s29}; PORT=${PORT:-18311}
. bench/serve/20261203-a33s28/quiet.sh
[ -n "${AUTOGROUP_NICE:-}" ] && echo "$AUTOGROUP_NICE" > /proc/self/autogroup
s=; trap '[ -n "$s" ] && kill $s 2>/dev/null || true' EXIT
. bench/serve/20261203-a33s28/serve-up.sh; s=$srv
kill -0 "$s" 2>/dev/null || { echo "decomp.sh: the server did not start (port $PORT taken?)" >&2; exit 1; }
echo "== $(date -u +%FT%TZ) $("$hark" --version | head -1) SERVE_ARGS=${SERVE_ARGS:-} $(cat /proc/self/autogroup)"
greedy() { echo "greedy $("$hark" bench llm --backend cpu --model "$f" -t 2 -r 1 --pp 0 --tg 128 --chain 2>&1 | awk '/^samples.*chained/ {print $NF}')"; }
sampled() { echo "sampled $("$hark" bench llm --backend cpu --model "$f" -t 2 -r 1 --pp 0 --tg 128 --chain --temp 0.7 --ctx 4096 --depth 35 2>&1 | awk '/^samples.*chained/ {print $NF}')"; }
chat() { HARK_PID=$s node "$root/serve/testdata/openai-client/stream-speed.mjs" http://127.0.0.1:$PORT smollm2-shape-q8_0 1 128 | awk '/^run 1:/ {sub(/^run 1: /, ""); print "chat " $0}'; }
req() { curl -s -o "$DIR/resp.json" -w '%{time_total}' http://127.0.0.1:$PORT/v1/chat/completions -H 'Content-Type: application/json' \
	-d "{\"model\":\"smollm2-shape-q8_0\",\"messages\":[{\"role\":\"user\",\"content\":\"Once upon a time\"}],\"max_tokens\":$1,\"temperature\":0.7,\"seed\":2}"; }
nostream() { req 128 > /dev/null; local t1 t128 n; t1=$(req 1); t128=$(req 128); n=$(grep -o '"completion_tokens":[0-9]*' "$DIR/resp.json" | cut -d: -f2)
	awk -v a="$t1" -v b="$t128" -v n="$n" 'BEGIN { printf "nostream T1 %.1f ms, T128 %.1f ms, %d tokens, %.2f tok/s\n", a * 1000, b * 1000, n, (n - 1) / (b - a) }'; }
for r in $(seq "$rounds"); do
	q=; [ "${GATE:-0}" -gt 0 ] && q="$(quiet "$GATE"), "
	echo "== round $r, ${q}load $(cut -d' ' -f1-3 /proc/loadavg)"
	case $((r % 4)) in
	1) foreign greedy; foreign sampled; srv=$s; foreign chat; foreign nostream; srv=;;
	2) foreign sampled; srv=$s; foreign chat; foreign nostream; srv=; foreign greedy;;
	3) srv=$s; foreign chat; foreign nostream; srv=; foreign greedy; foreign sampled;;
	0) srv=$s; foreign nostream; srv=; foreign greedy; foreign sampled; srv=$s; foreign chat; srv=;;
	esac
done
echo "== end $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
