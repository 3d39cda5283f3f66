#!/bin/bash
# Issue #37, round 7 (c37s29), staged for the next session and NOT run (no device time was left): the Whisper
# encoder's attention on the blocked path with the query rows of an item swept (BenchmarkAttentionEncoderBlocks,
# engine/cpu/kernels_bench_test.go), on one worker (w1) and on 16 (wN), on the device's 16-core CPU. One call:
#   bash .gpu/c37s29/c/sweep.sh      carry .gpu/c37s29/c: cpu.test.xz (CGO_ENABLED=0 GOOS=linux GOARCH=amd64
#                                    go test -c -trimpath -ldflags="-s -w" ./engine/cpu of branch c37s29), this script
# It decides whether the default block (attnBlockScores/1500 = 43 rows) should grow for non-causal attention over
# long key ranges: on the dev VM one worker spent 5-15% less CPU at 64-128 rows; at 16 workers fewer, larger items
# balance worse (108 items at 86 rows, 72 at 128, 54 at 172, against 210 at 43). ~40 s.
set -u
R=$(pwd); OUT=${OUT:-/tmp/out}; mkdir -p $OUT /tmp/c37s29s && cd /tmp/c37s29s
xz -dc $R/.gpu/c37s29/c/cpu.test.xz > cpu.test && chmod +x cpu.test || exit 3
{ date -u; nproc; cat /proc/loadavg; head -1 /proc/stat
  ./cpu.test -test.run '^$' -test.bench 'AttentionEncoderBlocks' -test.benchtime 20x -test.count 3 -test.cpu 16
  cat /proc/loadavg; head -1 /proc/stat; } 2>&1 | tee $OUT/sweep.log
