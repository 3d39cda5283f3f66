#!/bin/bash
# Lead's fourth GPU call (2026-11-29, session 3): the simdgroup-matrix emulation written once (issue 32) changes
# attention_mma's PTX; the matrix kernels on CUDA in normal/permuted/poisoned runs, and the GPU tests again.
set -u
K=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in cuda.test msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
CH='MatMulAllTypes|AttentionKernel|SelfSimdgroupMatrix|MatrixGGMLKit|Conv1DAllTypes|E2EStories|E2EWhisperJFK|Sample(Kernel|Degenerate|PlateauCut)|RopeKernel|FusedMatVecAllTypes'
{ nvidia-smi --query-gpu=name,driver_version --format=csv
  echo "== cuda.test ^TestGPU at $(el) s"; timeout 200 ./cuda.test -test.run '^TestGPU' -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual'; echo "exit ${PIPESTATUS[0]}"
  for mode in normal permuted poison; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261129";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== msltest $mode ($E) at $(el) s"; env $E HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.run "^Test($CH)\$" -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|\.go:[0-9]+:'; echo "exit ${PIPESTATUS[0]}"
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
cat $OUT/tests.log
