#!/usr/bin/env bash
# Round 30's quiet window (17:20-17:50 UTC, the lead and the other helpers off the CPUs): main (HARK_MAIN) against
# this branch (HARK_NEW), fresh servers for every block:
#   expjoin (TEST_BIN: engine/llm's test binary with expjoin_test.go.txt: TestExpJoin, TestExpPaged, in one process),
#   (round 29's abbin.sh and blocks.sh, DIR=/tmp/a33s30)
#   abbin.sh MAIN NEW (BENCH_B=1: each build's chat against its own greedy bench), blocks.sh MAIN NEW 2 K (the issue's
#   speed-cpu.sh, the builds alternated), abbin.sh of HARK_EXP against itself (A with HARK_EXP_NOJOIN=1: the draws in
#   a pass of their own, B joined), abbin.sh NEW MAIN (roles swapped), blocks.sh NEW MAIN 2 K.
# Usage (root): window.sh HARK_MAIN HARK_NEW HARK_EXP TEST_BIN MODEL OUTDIR [ROUNDS [K]]
set -uo pipefail
m=$(realpath "$1"); n=$(realpath "$2"); x=$(realpath "$3"); tb=$(realpath "$4"); model=$(realpath "$5"); out=$(realpath -m "$6")
rounds=${7:-12}; k=${8:-6}; here=bench/serve/20261203-a33s29; export DIR=${DIR:-/tmp/a33s30}
mkdir -p "$out"
log() { echo "== $(date -u +%T) $*, load $(cut -d' ' -f1-3 /proc/loadavg)"; }
log start
EXP_MODEL=$model EXP_PROF=$out/paged.pprof TB=$tb setsid bash -c 'cd engine/llm && echo -20 > /proc/self/autogroup && "$TB" -test.run "TestExpJoin|TestExpPaged" -test.v 2>&1 | grep -E "round|PASS|FAIL"' > "$out/expjoin-quiet.log"; log expjoin
BENCH_B=1 AUTOGROUP_NICE=-20 setsid $here/abbin.sh "$m" "$n" "$rounds" > "$out/abbin1-quiet.log" 2>&1; log abbin1
setsid $here/blocks.sh "$m" "$n" 2 "$k" > "$out/blocks1-quiet.log" 2>&1; log blocks1
ENV_A=HARK_EXP_NOJOIN=1 AUTOGROUP_NICE=-20 setsid $here/abbin.sh "$x" "$x" 10 > "$out/knob3-quiet.log" 2>&1; log knob3
BENCH_B=1 AUTOGROUP_NICE=-20 setsid $here/abbin.sh "$n" "$m" "$rounds" > "$out/abbin2-quiet.log" 2>&1; log abbin2
setsid $here/blocks.sh "$n" "$m" 2 "$k" > "$out/blocks2-quiet.log" 2>&1; log blocks2
