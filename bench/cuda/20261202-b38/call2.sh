#!/bin/bash
# Issue #38, session 26, helper b38, call 2: the paged split's grid against a deep prompt chunk. Main 9b4fbd0's
# BenchmarkGPUPromptBeside (c = 0, 4, 12, 28) and BenchmarkGPUBatchStep (decode only: what the split's empty
# threadgroups cost) under HARK_CUDA_TUNE settings of AttnPagedChunk / AttnPagedSplitGroups / AttnPagedSIMDGroups,
# and the per-kernel table of c = 12 under one. $K as call1.sh. K=.gpu/b38 bash .gpu/b38/call2.sh
set -u
K=${K:-.gpu/b38}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD; W=/w/b38
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared && cd $W
for b in base-hark base-cuda.test; do [ -x $b ] || { xz -T4 -dc $K/$b.xz > $b && chmod +x $b; }; done
tar -C $W/shared -xJf $K/tok.tar.xz
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin HARK_BENCH_MATMUL_ROWS=17
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
[ -f $F ] || ./base-hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
export HARK_BENCH_MODEL=$F
{ for T in "" AttnPagedChunk=512 AttnPagedChunk=256,AttnPagedSplitGroups=32 AttnPagedChunk=128,AttnPagedSplitGroups=64 \
    AttnPagedChunk=64,AttnPagedSplitGroups=128 AttnPagedChunk=128,AttnPagedSplitGroups=64,AttnPagedSIMDGroups=4 \
    AttnPagedChunk=64,AttnPagedSplitGroups=128,AttnPagedSIMDGroups=2 AttnPagedChunk=32,AttnPagedSplitGroups=256,AttnPagedSIMDGroups=1; do
  echo "== HARK_CUDA_TUNE=$T at $(el) s"
  HARK_CUDA_TUNE=$T timeout 60 ./base-cuda.test -test.run '^$' -test.bench 'GPUPromptBeside/prompt=(0|4|12|28)$' -test.benchtime 64x 2>&1 | grep -E 'ms/step|FAIL|panic'
  HARK_CUDA_TUNE=$T timeout 60 ./base-cuda.test -test.run '^$' -test.bench 'GPUBatchStep/rows=(4|16)$' -test.benchtime 128x 2>&1 | grep -E 'ms/step|FAIL|panic'
  done
  T=AttnPagedChunk=128,AttnPagedSplitGroups=64
  echo "== profiled c = 12 (graphs off), HARK_CUDA_TUNE=$T at $(el) s"
  HARK_CUDA_TUNE=$T HARK_CUDA_PROFILE=1 timeout 60 ./base-cuda.test -test.run '^$' -test.bench 'GPUPromptBeside/prompt=12$' -test.benchtime 32x -test.v 2>&1 | grep -E 'kernels a step|us/launch' | tail -9
  echo "== done at $(el) s"; } > $OUT/bench2.log 2>&1
cat $OUT/bench2.log
