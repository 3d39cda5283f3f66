#!/bin/sh
# Release -> text before and after (issue #40, dictation first), the two test
# binaries alternated in one run, each running BenchmarkStreamedReleaseToText
# (app/release_bench_test.go, copied into the "before" tree to build it):
#   before: main 22d8270 + app/release_bench_test.go
#   after:  branch tail40
# Built with:
#   (git archive 22d8270 | tar -x -C $BEFORE; cp app/release_bench_test.go $BEFORE/app/)
#   cd $BEFORE && go test -c -o before.app.test ./app
#   go test -c -o after.app.test ./app
# Run from the repository's app/ (the test data: HARK_TESTDATA, testdata/speechkit).
# Usage: run.sh BEFORE_BIN AFTER_BIN ROUNDS ITERATIONS
set -u
before=$1 after=$2 rounds=${3:-3} n=${4:-5}
export HARK_TESTDATA=${HARK_TESTDATA:-/work/shared}
for r in $(seq 1 "$rounds"); do
  for which in before after; do
    eval bin=\$$which
    echo "=== round $r: $which ($bin) at $(date -u +%H:%M:%S) UTC; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    /usr/bin/time -f "=== $which process: %e s wall, %U s user, %S s system" \
      nice -n -5 "$bin" -test.run '^$' -test.bench 'StreamedReleaseToText' -test.benchtime "${n}x" 2>&1 |
      grep -v 'was open to other users'
  done
done
echo "=== end at $(date -u +%H:%M:%S) UTC; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
