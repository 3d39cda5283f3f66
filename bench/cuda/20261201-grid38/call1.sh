#!/bin/bash
# Issue #38, nineteenth session, branch grid38, call 1: main 3d3a2c5's BenchmarkGPUBatchStep at 1, 4 and 16 rows
# (the server's mat-vec rule, HARK_BENCH_MATMUL_ROWS=17) and the 16-row step's per-kernel table (HARK_CUDA_PROFILE=1,
# graphs off), plus the 1-row step's table for comparison. From the checkout's root (its cuda/cubin: main's), with $K
# holding hark.xz, cuda.test.xz (main's, CGO_ENABLED=0 -trimpath -ldflags='-s -w' -tags hark_nocubin) and
# data.tar.xz (the smollm2 tokenizer):   K=.gpu/grid38 bash .gpu/grid38/call1.sh
set -u
K=${K:-.gpu/grid38}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/m && cd /w
for b in hark cuda.test; do xz -T4 -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin HARK_BENCH_MATMUL_ROWS=17
TOK=/w/shared/llm-kit/tokenizers/smollm2
F=/w/m/smollm2-135m-shape-v1-L30-q8_0.gguf
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; ./hark --version
  [ -f $F ] || ./hark bench llm --backend cpu --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16; echo "written at $(el) s"; } > $OUT/write.log 2>&1
export HARK_BENCH_MODEL=$F
{ echo "== BenchmarkGPUBatchStep at $(el) s"
  timeout 60 ./cuda.test -test.run '^$' -test.bench 'GPUBatchStep' -test.benchtime 256x 2>&1 | grep -E 'ms/step|FAIL|panic'
  echo "== profiled, 16 rows (graphs off) at $(el) s"
  HARK_CUDA_PROFILE=1 timeout 60 ./cuda.test -test.run '^$' -test.bench 'GPUBatchStep/rows=(1|16)$' -test.benchtime 64x -test.v 2>&1 | grep -vE '^(goos|goarch|pkg|cpu):'
  echo "== done at $(el) s"; } > $OUT/bench.log 2>&1
cat $OUT/write.log $OUT/bench.log
