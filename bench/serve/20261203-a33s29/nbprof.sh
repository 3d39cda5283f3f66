#!/usr/bin/env bash
# CPU profiles of nbab.sh's two servers (A the default, B SERVE_ARGS_B, default --no-batch) answering the same R
# unstreamed requests each (max_tokens 128, seed 2, temperature 0.7), alternated; OUT gets a.pprof and b.pprof (not
# committed) and profcat.sh's split of each, per decoded token (the same prefills on both sides).
# Usage (root): AUTOGROUP_NICE=-20 setsid nbprof.sh HARK OUT [R]
set -uo pipefail
hark=$(realpath "$1"); out=$(realpath -m "$2"); R=${3:-10}; DIR=${DIR:-/tmp/a33s29}; mkdir -p "$out"
[ -n "${AUTOGROUP_NICE:-}" ] && echo "$AUTOGROUP_NICE" > /proc/self/autogroup
sa=; sb=; trap 'kill $sa $sb 2>/dev/null || true' EXIT
export HARK_CPUPROFILE=$out/a.pprof; PORT=18341 SERVE_ARGS=; . bench/serve/20261203-a33s28/serve-up.sh; sa=$srv
export HARK_CPUPROFILE=$out/b.pprof; PORT=18342 SERVE_ARGS=${SERVE_ARGS_B---no-batch}; . bench/serve/20261203-a33s28/serve-up.sh; sb=$srv; unset HARK_CPUPROFILE
req() { curl -s -o /dev/null -w '%{time_total}' http://127.0.0.1:$1/v1/chat/completions -H 'Content-Type: application/json' \
	-d "{\"model\":\"smollm2-shape-q8_0\",\"messages\":[{\"role\":\"user\",\"content\":\"Once upon a time\"}],\"max_tokens\":128,\"temperature\":0.7,\"seed\":2}"; }
echo "== $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$R"); do if [ $((r % 2)) -eq 1 ]; then echo "A $(req 18341) B $(req 18342)"; else echo "B $(req 18342) A $(req 18341)"; fi; done
kill -INT $sa $sb; wait $sa $sb 2>/dev/null; sa=; sb=
echo "== load $(cut -d' ' -f1-3 /proc/loadavg)"
for s in a b; do echo "== $s ($((R + 1)) requests, $((R * 127)) decoded tokens after the first of each)"; bench/serve/20261203-a33s29/profcat.sh "$hark" "$out/$s.pprof" $((R * 127)); done
