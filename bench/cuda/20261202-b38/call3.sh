#!/bin/bash
# Issue #38, session 26, helper b38, call 3: the branch's binaries (attention_paged_f16_a16, rope_kv_paged's table
# check by SIMD-groups): writes the SmolLM2-shape q8_0 file, JIT-compiles the branch's PTX (the first GPU test), the
# GPU tests (TestGPUBatchEqualsSequential in normal, HARK_CUDA_PERMUTE=20261201 and HARK_CUDA_POISON=1 runs), then BenchmarkGPUPromptBeside / BenchmarkGPUBatchStep
# with the split off (the cuda default) and on, and the per-kernel table at c = 12. $K holds cuda.test.xz,
# hark.xz (the branch's, CGO_ENABLED=0 -trimpath -ldflags='-s -w' -tags hark_nocubin) and data.tar.xz
# (the smollm2 tokenizer, stories260K and its golden file). K=.gpu/b38/t bash .gpu/b38/t/call3.sh
set -u
K=${K:-.gpu/b38/t}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD; W=/w/b38
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared && cd $W
for b in hark cuda.test; do xz -T4 -dc $K/$b.xz > $b && chmod +x $b; done
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
( [ -f $F ] || ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > $W/write.log 2>&1 ) &
WP=$!
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261201";; poison) echo "HARK_CUDA_POISON=1";; esac; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  for mode in normal permuted poison; do
    E=$(modeenv $mode)
    echo "== cuda.test TestGPUBatchEqualsSequential $mode ($E) at $(el) s"
    env $E timeout 150 ./cuda.test -test.run '^TestGPUBatchEqualsSequential$' -test.v -test.count=1 > $OUT/cuda-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/cuda-$mode.v.log | head -8
  done; echo "== tests done at $(el) s"; } > $OUT/call3-tests.log 2>&1
wait $WP; cat $W/write.log | tail -2 >> $OUT/call3-tests.log
export HARK_BENCH_MODEL=$F HARK_BENCH_MATMUL_ROWS=17
{ for T in "" AttnPagedChunk=512; do
  echo "== branch BenchmarkGPUPromptBeside / GPUBatchStep HARK_CUDA_TUNE=$T at $(el) s"
  HARK_CUDA_TUNE=$T timeout 60 ./cuda.test -test.run '^$' -test.bench 'GPUPromptBeside' -test.benchtime 64x 2>&1 | grep -E 'ms/step|FAIL|panic'
  HARK_CUDA_TUNE=$T timeout 60 ./cuda.test -test.run '^$' -test.bench 'GPUBatchStep' -test.benchtime 256x 2>&1 | grep -E 'ms/step|FAIL|panic'
  done
  echo "== profiled c = 0, 12 (graphs off) at $(el) s"
  HARK_CUDA_PROFILE=1 timeout 60 ./cuda.test -test.run '^$' -test.bench 'GPUPromptBeside/prompt=(0|12)$' -test.benchtime 32x -test.v 2>&1 | grep -E 'kernels a step|us/launch|ms/step'
  echo "== done at $(el) s"; } > $OUT/call3-bench.log 2>&1
(cd $OUT && tar -czf call3-test-logs.tgz *.v.log && rm *.v.log)
cat $OUT/call3-tests.log $OUT/call3-bench.log
