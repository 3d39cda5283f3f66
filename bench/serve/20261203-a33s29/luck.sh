#!/usr/bin/env bash
# Is a server process's speed its own? N hark serve side by side (each loads the same SmolLM2-shaped q8_0 file), then
# R rounds of one streamed chat through the official client against each (the order rotated each round) and one greedy
# tg128 chained bench (a fresh process each). If the chats' spread between servers is larger than within each, a
# process draws its speed when it starts (memory placement), and a script that measures one server (speed-cpu.sh)
# draws once. Each line ends with foreign N% (a33s28's quiet.sh). Usage (root): setsid luck.sh HARK [N [R]] > log
set -uo pipefail
hark=$(realpath "$1"); n=${2:-4}; rounds=${3:-8}; root=$(pwd); DIR=${DIR:-/tmp/a33s29}
. bench/serve/20261203-a33s28/quiet.sh
[ -n "${AUTOGROUP_NICE:-}" ] && echo "$AUTOGROUP_NICE" > /proc/self/autogroup
pids=(); trap 'kill ${pids[@]} 2>/dev/null || true' EXIT
for i in $(seq 0 $((n - 1))); do
	PORT=$((18301 + i)); . bench/serve/20261203-a33s28/serve-up.sh; pids+=($srv)
done
echo "== $(date -u +%FT%TZ) $n servers (${pids[*]}), $(cat /proc/self/autogroup), load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 0 $((n - 1))); do echo "server $i: $(grep -E 'AnonHugePages|Rss' /proc/${pids[$i]}/smaps_rollup | tr -s ' ' | tr '\n' ' ')"; done
chat() { srv=${pids[$1]}; HARK_PID=$srv node "$root/serve/testdata/openai-client/stream-speed.mjs" http://127.0.0.1:$((18301 + $1)) smollm2-shape-q8_0 1 128 | awk -v s=$1 '/^run 1:/ {sub(/^run 1: /, ""); print "chat" s " " $0}'; }
greedy() { srv=; echo "greedy $("$hark" bench llm --backend cpu --model "$f" -t 2 -r 1 --pp 0 --tg 128 --chain 2>&1 | awk '/^samples.*chained/ {print $NF}')"; }
for r in $(seq "$rounds"); do
	echo "== round $r, load $(cut -d' ' -f1-3 /proc/loadavg)"
	for j in $(seq 0 $((n - 1))); do i=$(( (j + r) % n )); srv=${pids[$i]}; foreign chat $i; [ $j -eq $((r % n)) ] && foreign greedy; done
done
echo "== end $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
