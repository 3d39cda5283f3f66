#!/bin/bash
# Issue #38, nineteenth session, branch grid38, call 3, right after call2.sh on the same warm machine (its model file
# and the driver's JIT cache of the branch's PTX): the branch's GPU tests (cuda's TestGPUBatchEqualsSequential and
# TestGPUStoriesReplay, msltest's sample and paged kernels through CUDA with the device's tuning) in the normal,
# permuted-block and NaN-poisoned modes side by side; BenchmarkGPUBatchStep (1/4/16 rows, the server's mat-vec rule)
# alternated new, base, new, base; the branch's 1- and 16-row steps' per-kernel tables (graphs off); then tuning
# probes at 16 rows (the GEMM path, attention_paged at 4 SIMD-groups, the sampler's segments at 2048 tokens, the
# mat-vecs' MatVecBatch 4 and 2 and MatVecRows 1). From the checkout's root with $K holding base-cuda.test.xz,
# cuda.test.xz, msltest.test.xz, common.sh and data.tar.xz:   K=.gpu/grid38b bash .gpu/grid38b/call3.sh
set -u
K=${K:-.gpu/grid38b}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD
. $K/common.sh
mkdir -p $OUT $W/shared $W/base $W/new $W/v && cd $W
xz -T4 -dc $K/base-cuda.test.xz > base/cuda.test
for b in cuda.test msltest.test; do xz -T4 -dc $K/$b.xz > new/$b; done
chmod +x base/* new/*
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  [ -f $F ] && echo "call2's model file present" || echo "no model file (a fresh machine): the benches fail"; } > $OUT/write.log 2>&1
MR='^Test(Sample.*|AttentionPaged.*|PagedKernelsBadRow|RopeKVPagedKernel|E2EBatchPagedSplit)$'
P=()
for m in normal permuted poison; do
  E=$(modeenv $m)
  ( env $E timeout 200 new/cuda.test -test.run '^TestGPU(BatchEqualsSequential|StoriesReplay)$' -test.v -test.count=1 > $W/v/cuda-$m.v.log 2>&1; echo "exit $? at $(el) s" >> $W/v/cuda-$m.v.log ) &
  P+=($!)
  ( env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 200 new/msltest.test -test.run "$MR" -test.v -test.count=1 > $W/v/msl-$m.v.log 2>&1; echo "exit $? at $(el) s" >> $W/v/msl-$m.v.log ) &
  P+=($!)
done
wait "${P[@]}"
{ echo "== tests done at $(el) s"
  for m in normal permuted poison; do
    for k in cuda msl; do
      echo "== $k $m ($(modeenv $m)): $(tail -1 $W/v/$k-$m.v.log), passed $(grep -c -- '--- PASS' $W/v/$k-$m.v.log)"
      grep -E '^(\s*--- |ok|FAIL|panic)|Error|expected|actual' $W/v/$k-$m.v.log | grep -v -- '--- PASS' | head -12
    done
  done; } > $OUT/tests.log 2>&1
(cd $W/v && tar -czf $OUT/test-logs.tgz *.v.log)
{ bench new; bench base; bench new; bench base; } > $OUT/bench.log 2>&1
{ echo "== new, profiled (graphs off), 1 and 16 rows at $(el) s"
  HARK_CUDA_PROFILE=1 HARK_BENCH_MATMUL_ROWS=17 HARK_BENCH_MODEL=$F timeout 60 new/cuda.test -test.run '^$' -test.bench 'GPUBatchStep/rows=(1|16)$' -test.benchtime 64x -test.v 2>&1 | grep -vE '^(goos|goarch|pkg|cpu):'
  echo "== new, 16 rows on the GEMM path (HARK_BENCH_MATMUL_ROWS=16) at $(el) s"
  HARK_BENCH_MATMUL_ROWS=16 HARK_BENCH_MODEL=$F timeout 60 new/cuda.test -test.run '^$' -test.bench 'GPUBatchStep/rows=16$' -test.benchtime 256x 2>&1 | grep -E 'ms/step|FAIL|panic'
  for T in AttnPagedSIMDGroups=4 SampleSegment=2048 MatVecBatch=4 MatVecBatch=2 MatVecRows=1; do
    echo "== new, 16 rows, HARK_CUDA_TUNE=$T at $(el) s"
    HARK_CUDA_TUNE=$T HARK_BENCH_MATMUL_ROWS=17 HARK_BENCH_MODEL=$F timeout 60 new/cuda.test -test.run '^$' -test.bench 'GPUBatchStep/rows=16$' -test.benchtime 256x 2>&1 | grep -E 'ms/step|FAIL|panic'
  done
  echo "== done at $(el) s"; } > $OUT/extra.log 2>&1
cat $OUT/write.log $OUT/tests.log $OUT/bench.log $OUT/extra.log
