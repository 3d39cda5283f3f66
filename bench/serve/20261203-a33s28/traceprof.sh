#!/usr/bin/env bash
# One hark serve under HARK_TRACE and HARK_CPUPROFILE together (the trace then carries the CPU samples), answering R
# streamed chats through the official client (one process: a warm-up, then R timed runs); OUT gets serve.trace and
# serve.pprof (not committed: MBs) and the client's lines. Read with the trace reader (tracereq.go.txt), which splits
# the samples by request. AUTOGROUP_NICE as rounds.sh (run under setsid).
# Usage (repository root): traceprof.sh HARK OUT [R]
set -euo pipefail
hark=$(realpath "$1"); out=$(realpath -m "$2"); R=${3:-8}; root=$(pwd); mkdir -p "$out"
DIR=${DIR:-/tmp/a33/models}; PORT=${PORT:-18097}
if [ -n "${AUTOGROUP_NICE:-}" ]; then echo "$AUTOGROUP_NICE" > /proc/self/autogroup; fi
srv=; trap '[ -n "$srv" ] && kill $srv 2>/dev/null || true' EXIT
echo "== $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) $(cat /proc/self/autogroup) SERVE_ARGS=${SERVE_ARGS:-}"
HARK_TRACE=$out/serve.trace HARK_CPUPROFILE=$out/serve.pprof . bench/serve/20261203-a33s28/serve-up.sh
HARK_PID=$srv node "$root/serve/testdata/openai-client/stream-speed.mjs" http://127.0.0.1:$PORT smollm2-shape-q8_0 "$R" 128 | grep '^run'
kill -INT $srv; wait $srv || true; srv=
echo "== load $(cut -d' ' -f1-3 /proc/loadavg)"
