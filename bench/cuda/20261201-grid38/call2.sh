#!/bin/bash
# Issue #38, nineteenth session, branch grid38, call 2 (the last): main 3d3a2c5's binaries (base/) against this
# branch's (new/: the step's draws in one Sample dispatch, attention_paged's CUDA entry bounded at 256 threads). The
# branch's PTX differs from the checkout's cubins, so its first processes JIT-compile it (~60 s): its GPU tests (cuda's
# TestGPUBatchEqualsSequential and TestGPUStoriesReplay, msltest's sample and paged kernels through CUDA with the
# device's tuning) start at once in the normal, permuted-block and NaN-poisoned modes side by side, each paying its
# JIT, while main's first round (BenchmarkGPUBatchStep 1/4/16 rows, then hark serve --batch-gpu --ctx 8192 against
# hark bench serve --concurrency 1,16,1,16) runs; once they are done, the rounds alternate new, base, new, and the
# branch's 1- and 16-row steps are profiled (graphs off); then 16 rows on the GEMM path, attention_paged at 4 SIMD-groups,
# the sampler's segments at 2048 tokens and three mat-vec geometries at 16 rows (MatVecBatch 4 and 2, MatVecRows 1)
# are timed once each (the branch's binary). From the checkout's root with $K holding base-hark.xz,
# base-cuda.test.xz, hark.xz, cuda.test.xz, msltest.test.xz, data.tar.xz:   K=.gpu/grid38 bash .gpu/grid38/call2.sh
set -u
K=${K:-.gpu/grid38}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/m /w/models /w/base /w/new /w/v && cd /w
for b in hark cuda.test; do xz -T4 -dc $K/base-$b.xz > base/$b; done
for b in hark cuda.test msltest.test; do xz -T4 -dc $K/$b.xz > new/$b; done
chmod +x base/* new/*
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
TOK=/w/shared/llm-kit/tokenizers/smollm2
F=/w/m/smollm2-135m-shape-v1-L30-q8_0.gguf
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  [ -f $F ] || base/hark bench llm --backend cpu --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16; echo "written at $(el) s"; } > $OUT/write.log 2>&1
ln -sf $F /w/models/smollm2-shape-q8_0.gguf
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261201";; poison) echo "HARK_CUDA_POISON=1";; esac; }
MR='^Test(Sample.*|AttentionPaged.*|PagedKernelsBadRow|RopeKVPagedKernel|E2EBatchPagedSplit)$'
P=()
for m in normal permuted poison; do
  E=$(modeenv $m)
  ( env $E timeout 240 new/cuda.test -test.run '^TestGPU(BatchEqualsSequential|StoriesReplay)$' -test.v -test.count=1 > /w/v/cuda-$m.v.log 2>&1; echo "exit $? at $(el) s" >> /w/v/cuda-$m.v.log ) &
  P+=($!)
  ( env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 240 new/msltest.test -test.run "$MR" -test.v -test.count=1 > /w/v/msl-$m.v.log 2>&1; echo "exit $? at $(el) s" >> /w/v/msl-$m.v.log ) &
  P+=($!)
done
bench() { # $1: base or new
  echo "== $1 BenchmarkGPUBatchStep at $(el) s"
  HARK_BENCH_MATMUL_ROWS=17 HARK_BENCH_MODEL=$F timeout 60 $1/cuda.test -test.run '^$' -test.bench 'GPUBatchStep' -test.benchtime 256x 2>&1 | grep -E 'ms/step|FAIL|panic'; }
serve() { # $1: base or new, $2: port
  echo "== $1 hark serve --backend cuda --batch-gpu --ctx 8192; hark bench serve --concurrency 1,16,1,16 at $(el) s"
  $1/hark serve --models-dir /w/models --backend cuda --batch-gpu --ctx 8192 --timeout 5m --addr 127.0.0.1:$2 > /w/v/hserve-$1-$2.log 2>&1 &
  local SP=$!
  for i in $(seq 300); do (echo > /dev/tcp/127.0.0.1/$2) 2>/dev/null && break; sleep 0.2; done
  timeout 90 $1/hark bench serve --url http://127.0.0.1:$2 --model smollm2-shape-q8_0 --concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 2>&1
  kill $SP; wait $SP; }
{ bench base; } > $OUT/bench.log 2>&1
{ serve base 18101; } > $OUT/serve.log 2>&1
echo "== base round 1 done at $(el) s; waiting for the tests (JIT)" >> $OUT/bench.log
wait "${P[@]}"
{ echo "== tests done at $(el) s"
  for m in normal permuted poison; do
    for k in cuda msl; do
      echo "== $k $m ($(modeenv $m)): $(tail -1 /w/v/$k-$m.v.log), passed $(grep -c -- '--- PASS' /w/v/$k-$m.v.log)"
      grep -E '^(\s*--- |ok|FAIL|panic)|Error|expected|actual' /w/v/$k-$m.v.log | grep -v -- '--- PASS' | head -12
    done
  done; } > $OUT/tests.log 2>&1
(cd /w/v && tar -czf $OUT/test-logs.tgz *.v.log)
{ bench new; } >> $OUT/bench.log 2>&1
{ serve new 18102; } >> $OUT/serve.log 2>&1
{ bench base; } >> $OUT/bench.log 2>&1
{ serve base 18103; } >> $OUT/serve.log 2>&1
{ bench new; } >> $OUT/bench.log 2>&1
{ serve new 18104; echo "== done at $(el) s"; } >> $OUT/serve.log 2>&1
{
  echo "== new, profiled (graphs off), 1 and 16 rows at $(el) s"
  HARK_CUDA_PROFILE=1 HARK_BENCH_MATMUL_ROWS=17 HARK_BENCH_MODEL=$F timeout 60 new/cuda.test -test.run '^$' -test.bench 'GPUBatchStep/rows=(1|16)$' -test.benchtime 64x -test.v 2>&1 | grep -vE '^(goos|goarch|pkg|cpu):'
  echo "== new, 16 rows on the GEMM path (HARK_BENCH_MATMUL_ROWS=16) at $(el) s"
  HARK_BENCH_MATMUL_ROWS=16 HARK_BENCH_MODEL=$F timeout 60 new/cuda.test -test.run '^$' -test.bench 'GPUBatchStep/rows=16$' -test.benchtime 256x 2>&1 | grep -E 'ms/step|FAIL|panic'
  echo "== new, attention_paged with 4 SIMD-groups (HARK_CUDA_TUNE=AttnPagedSIMDGroups=4) at $(el) s"
  HARK_CUDA_TUNE=AttnPagedSIMDGroups=4 HARK_BENCH_MATMUL_ROWS=17 HARK_BENCH_MODEL=$F timeout 60 new/cuda.test -test.run '^$' -test.bench 'GPUBatchStep' -test.benchtime 256x 2>&1 | grep -E 'ms/step|FAIL|panic'
  echo "== new, the sampler in segments of 2048 tokens (HARK_CUDA_TUNE=SampleSegment=2048) at $(el) s"
  HARK_CUDA_TUNE=SampleSegment=2048 HARK_BENCH_MATMUL_ROWS=17 HARK_BENCH_MODEL=$F timeout 60 new/cuda.test -test.run '^$' -test.bench 'GPUBatchStep/rows=(1|16)$' -test.benchtime 256x 2>&1 | grep -E 'ms/step|FAIL|panic'
  for T in MatVecBatch=4 MatVecBatch=2 MatVecRows=1; do
    echo "== new, 16 rows, the mat-vecs' geometry HARK_CUDA_TUNE=$T at $(el) s"
    HARK_CUDA_TUNE=$T HARK_BENCH_MATMUL_ROWS=17 HARK_BENCH_MODEL=$F timeout 60 new/cuda.test -test.run '^$' -test.bench 'GPUBatchStep/rows=16$' -test.benchtime 256x 2>&1 | grep -E 'ms/step|FAIL|panic'
  done
  echo "== done at $(el) s"; } > $OUT/extra.log 2>&1
(cd /w/v && tar -czf $OUT/serve-logs.tgz hserve-*.log)
cat $OUT/write.log $OUT/tests.log $OUT/bench.log $OUT/serve.log $OUT/extra.log
