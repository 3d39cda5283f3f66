#!/bin/bash
# Issue #38, session 26, helper b38, call 1: where a step with a deep prompt chunk goes. Main 9b4fbd0's
# BenchmarkGPUPromptBeside at c = 0, 4, 12 prompt rows with the per-kernel table (HARK_CUDA_PROFILE=1, graphs off),
# the split off (main's default) and on (HARK_CUDA_TUNE=AttnPagedChunk=512). $K holds base-hark.xz,
# base-cuda.test.xz, tok.tar.xz (the smollm2 tokenizer). Run from the checkout's root: K=.gpu/b38 bash .gpu/b38/call1.sh
set -u
K=${K:-.gpu/b38}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD; W=/w/b38
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared && cd $W
for b in base-hark base-cuda.test; do [ -x $b ] || { xz -T4 -dc $K/$b.xz > $b && chmod +x $b; }; done
tar -C $W/shared -xJf $K/tok.tar.xz
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin HARK_BENCH_MATMUL_ROWS=17
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; ./base-hark --version
  [ -f $F ] || ./base-hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 | tail -3; echo "written at $(el) s"; } > $OUT/write.log 2>&1
export HARK_BENCH_MODEL=$F
{ for T in "" AttnPagedChunk=512; do
  echo "== BenchmarkGPUPromptBeside HARK_CUDA_TUNE=$T at $(el) s"
  HARK_CUDA_TUNE=$T timeout 90 ./base-cuda.test -test.run '^$' -test.bench 'GPUPromptBeside' -test.benchtime 64x 2>&1 | grep -E 'ms/step|FAIL|panic'
  echo "== profiled, c = 0, 4, 12 (graphs off), HARK_CUDA_TUNE=$T at $(el) s"
  HARK_CUDA_TUNE=$T HARK_CUDA_PROFILE=1 timeout 90 ./base-cuda.test -test.run '^$' -test.bench 'GPUPromptBeside/prompt=(0|4|12)$' -test.benchtime 32x -test.v 2>&1 | grep -vE '^(goos|goarch|pkg|cpu):'
  done; echo "== done at $(el) s"; } > $OUT/bench.log 2>&1
cat $OUT/write.log $OUT/bench.log
