#!/bin/bash
# Issue #38, not yet run: this branch's final state against main in one call. $K holds cuda.test.xz (this branch),
# cuda-base.test.xz (main 8c2ba3d) and msltest.test.xz (this branch), all built with -tags hark_nocubin, and
# data.tar.xz (callA's); the SmolLM2-shape file is written with hark from a second call or another folder (MODEL).
# BenchmarkGPUBatchStep on the mat-vec path (HARK_BENCH_MATMUL_ROWS=17) for main, this branch (MatVecMultiBatch 4)
# and this branch at 2, interleaved; msltest's multi-row and paged kernels through CUDA in three modes.
set -u
K=${K:-.gpu/paged38c}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared && cd /w
for b in cuda.test cuda-base.test msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin HARK_BENCH_MATMUL_ROWS=17
F=${MODEL:-/w/m/smollm2-135m-shape-v1-L30-q8_0.gguf}
{ for i in 1 2; do for c in "cuda-base.test " "cuda.test " "cuda.test MatVecMultiBatch=2"; do set -- $c
    echo "== $1 ${2:-} run $i at $(el) s"
    env ${2:+HARK_CUDA_TUNE=$2} HARK_BENCH_MODEL=$F timeout 90 ./$1 -test.run '^$' -test.bench 'GPUBatchStep/rows=(1|4|16)$' -test.benchtime 256x 2>&1 | grep -E 'ms/step|FAIL|panic'
  done; done
  HARK_CUDA_PROFILE=1 HARK_BENCH_MODEL=$F timeout 60 ./cuda.test -test.run '^$' -test.bench 'GPUBatchStep/rows=16$' -test.benchtime 128x 2>&1
  echo "== done at $(el) s"; } > $OUT/batchstep.log 2>&1
for m in normal permuted poison; do
  E=""; [ $m = permuted ] && E="HARK_CUDA_PERMUTE=20261201"; [ $m = poison ] && E="HARK_CUDA_POISON=1"
  echo "== msltest $m at $(el) s"
  env $E HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.run '^Test(MatVecMultiRows|MatVecQ8Activations|AttentionPagedKernel|RopeKVPagedKernel|PagedKernelsBadRow|E2EStories)$' -test.count=1 2>&1 | tail -5
done > $OUT/msltest.log 2>&1
cat $OUT/batchstep.log $OUT/msltest.log
