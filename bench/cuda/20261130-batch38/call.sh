#!/bin/bash
# Issue #38 on the H200 (2026-11-30, fourteenth session, branch batch38): the batched step profiled and timed
# in-process (cuda's BenchmarkGPUBatchStep: 1, 4 and 16 sequences stepping as engine/batch's Runner steps them),
# hark serve --batch-gpu against hark bench serve, and the tests, from one binary of the branch. "before" is the
# branch with HARK_CUDA_TUNE=AttnPagedSIMDGroups=1 (attention_paged's old geometry: one SIMD-group walking every
# 32-key tile of a (head, row)), "after" the default (8 SIMD-groups). Run from the repository root with $K
# holding hark.xz, cuda.test.xz, msltest.test.xz and data.tar.xz.
set -u
K=${K:-.gpu/batch38}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/models && cd /w
for b in hark cuda.test msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
( nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; ./hark --version
  ./hark bench llm --backend cpu --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 ) > $OUT/write.log 2>&1
F=/w/m/smollm2-135m-shape-v1-L30-q8_0.gguf; ln -sf $F /w/models/smollm2-shape-q8_0.gguf
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
tests() { # $1: mode
  E=$(modeenv $1)
  echo "== cuda.test $1 ($E) at $(el) s"
  env $E timeout 150 ./cuda.test -test.run '^TestGPU(StoriesReplay|BatchEqualsSequential)$' -test.v -test.count=1 > $OUT/cuda-$1.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|peak' $OUT/cuda-$1.v.log | head -20
  R='^Test(AttentionPagedKernel|RopeKVPagedKernel|PagedKernelsBadRow|E2EStories)$'; [ $1 = normal ] && R='^Test(AttentionPagedKernel|RopeKVPagedKernel|PagedKernelsBadRow|E2EStories|KernelsOtherTunings)$'
  echo "== msltest $1 at $(el) s"
  env $E HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.short -test.run "$R" -test.v -test.count=1 > $OUT/msltest-$1.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|worst' $OUT/msltest-$1.v.log | grep -v -- '--- PASS' | head -20
  grep -c -- '--- PASS' $OUT/msltest-$1.v.log; }
{ tests normal; } > $OUT/tests.log 2>&1
{ for cfg in before after; do
    T=""; [ $cfg = before ] && T="HARK_CUDA_TUNE=AttnPagedSIMDGroups=1"
    echo "== BenchmarkGPUBatchStep $cfg ($T) at $(el) s"
    env $T HARK_BENCH_MODEL=$F timeout 120 ./cuda.test -test.run '^$' -test.bench GPUBatchStep -test.benchtime 256x -test.count 2 2>&1
    echo "== the same, HARK_CUDA_PROFILE=1 (graphs off) at $(el) s"
    env $T HARK_CUDA_PROFILE=1 HARK_BENCH_MODEL=$F timeout 120 ./cuda.test -test.run '^$' -test.bench GPUBatchStep -test.benchtime 128x 2>&1
  done
  echo "== after, 16 rows on the mat-vec path (HARK_BENCH_MATMUL_ROWS=17), timed then profiled, at $(el) s"
  HARK_BENCH_MATMUL_ROWS=17 HARK_BENCH_MODEL=$F timeout 60 ./cuda.test -test.run '^$' -test.bench 'GPUBatchStep/rows=16$' -test.benchtime 256x -test.count 2 2>&1
  HARK_CUDA_PROFILE=1 HARK_BENCH_MATMUL_ROWS=17 HARK_BENCH_MODEL=$F timeout 60 ./cuda.test -test.run '^$' -test.bench 'GPUBatchStep/rows=16$' -test.benchtime 128x 2>&1
  echo "== done at $(el) s"; } > $OUT/batchstep.log 2>&1
{ for cfg in before after; do
    T=""; [ $cfg = before ] && T="HARK_CUDA_TUNE=AttnPagedSIMDGroups=1"
    echo "== $cfg ($T): hark serve --backend cuda --batch-gpu; hark bench serve --concurrency 1,4,16,1,4,16 at $(el) s"
    env $T ./hark serve --models-dir /w/models --backend cuda --batch-gpu --timeout 5m --addr 127.0.0.1:18090 > $OUT/hserve-$cfg.log 2>&1 &
    P=$!
    for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/18090) 2>/dev/null && break; sleep 0.2; done
    timeout 100 ./hark bench serve --url http://127.0.0.1:18090 --model smollm2-shape-q8_0 --concurrency 1,4,16,1,4,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 2>&1
    kill $P; wait $P
  done; echo "== done at $(el) s"; } > $OUT/serve-batch.log 2>&1
{ tests permuted; tests poison; echo "== tests done at $(el) s"; } >> $OUT/tests.log 2>&1
cat $OUT/write.log $OUT/tests.log $OUT/batchstep.log $OUT/serve-batch.log
(cd $OUT && tar -czf test-logs.tgz *.v.log hserve-*.log && rm *.v.log hserve-*.log)
