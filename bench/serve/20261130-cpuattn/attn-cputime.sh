#!/usr/bin/env bash
# CPU time (user+sys) of BenchmarkAttentionDecodeSmol's sub-benchmarks, each
# in its own process (5 × 20,000 runs on a one-worker pool), for each test
# binary given, interleaved ROUNDS times: the machine is shared, so wall
# clock (ns/op) is not the measure, CPU time per run is.
# Usage: attn-cputime.sh ROUNDS BIN...   (BIN: go test -c of engine/cpu)
set -euo pipefail
rounds=$1; shift
n=20000; count=5
for r in $(seq "$rounds"); do
  for sub in contiguous/kv64 paged/kv64 contiguous/kv160 paged/kv160; do
    for bin in "$@"; do
      t=$( { /usr/bin/time -f "%U %S" "$bin" -test.run '^$' -test.bench "AttentionDecodeSmol/$sub\$" \
             -test.cpu 1 -test.count $count -test.benchtime ${n}x > /dev/null; } 2>&1 | tail -1)
      us=$(awk -v t="$t" -v runs=$((n * count + 1)) 'BEGIN { split(t, a, " "); printf "%.1f", (a[1] + a[2]) * 1e6 / runs }')
      echo "round $r $(basename "$bin") $sub cpu_us_per_run $us (user+sys $t) load $(cut -d' ' -f1 /proc/loadavg)"
    done
  done
done
