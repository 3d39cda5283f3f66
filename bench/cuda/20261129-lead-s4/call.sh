#!/bin/bash
# Lead's GPU call on the merged tree (2026-11-29, fourth session): issue 35's native sm_80 module and tensor-core
# mat_mul_mma, issue 34's round 4 (stacked weights, capped attention split) and issue 33's no-top-k Sample kernel
# together. The cuda package's GPU tests, then the msltest kernels on CUDA in normal/permuted/poisoned runs, then
# the same with the native module off. Binaries: CGO_ENABLED=0 go test -c ./cuda ./shaders/msltest, xz-compressed,
# with data.tar.xz (stories260K, llm-kit golden/ggml-quants/smollm2/tokenize/llama-spm vocab, jfk) and wq8.xz (kit q8_0).
set -u
K=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in cuda.test msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
CH='MatMulAllTypes|MatMulTensorCores|AttentionKernel|MatrixGGMLKit|Conv1DAllTypes|E2EStories|E2EWhisperJFK|Sample(Kernel|Degenerate|PlateauCut|NoTopKRefine)|RopeKernel|FusedMatVecAllTypes|KernelsOtherTunings'
{ nvidia-smi --query-gpu=name,driver_version --format=csv
  echo "== cuda.test ^TestGPU at $(el) s"; timeout 200 ./cuda.test -test.run '^TestGPU' -test.v -test.count=1 > $OUT/cuda-gpu.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)' $OUT/cuda-gpu.v.log
  for mode in normal permuted poison nonative; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261129";; poison) E="HARK_CUDA_POISON=1";; nonative) E="HARK_CUDA_NATIVE=0";; esac
    echo "== msltest $mode ($E) at $(el) s"; env $E HARK_MSLTEST_DEVICE=cuda timeout 120 ./msltest.test -test.run "^Test($CH)\$" -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)' $OUT/msltest-$mode.v.log
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
cat $OUT/tests.log
