#!/usr/bin/env bash
# CPU time (user+sys) per draw of BenchmarkSampleNoTopK's chat cases
# (49,152 logits, temperature 0.7, no top-p: N(0, 3) and the flat N(0, 0.3)
# of random-weight files), one thread, each in its own process (2,000
# draws, or DRAWS), for each test binary given, interleaved ROUNDS times.
# Usage: sample-cputime.sh ROUNDS BIN...   (BIN: go test -c of engine/cpu)
set -euo pipefail
rounds=$1; shift
n=${DRAWS:-2000}
for r in $(seq "$rounds"); do
  for sub in 'sd=3/top-p=1$' 'sd=0.3/top-p=1$'; do
    for bin in "$@"; do
      t=$( { /usr/bin/time -f "%U %S" "$bin" -test.run '^$' -test.bench "SampleNoTopK/n=49152/$sub" \
             -test.cpu 1 -test.benchtime ${n}x > /dev/null; } 2>&1 | tail -1)
      us=$(awk -v t="$t" -v runs=$((n + 1)) 'BEGIN { split(t, a, " "); printf "%.1f", (a[1] + a[2]) * 1e6 / runs }')
      echo "round $r $(basename "$bin") $sub cpu_us_per_draw $us (user+sys $t) load $(cut -d' ' -f1 /proc/loadavg)"
    done
  done
done
