#!/bin/bash
# Lead's check of the merged tree (integ: gpu5 repacked weights + attention_group, sample3 multi-group Sample pass,
# batch3, meeting3, speechkit): the cuda package's GPU tests and msltest's kernel and end-to-end tests on CUDA in
# normal, permuted-block and NaN-poisoned runs. Builds nothing: takes cuda.test.xz, msltest.test.xz, data.tar.xz,
# wq8.xz from the folder it is in (cross-compiled on the dev machine from integ; see the README beside the log).
set -u
K=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in cuda.test msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
CH='RepackedWeights|MatVecAllTypes|MatMulTensorCores|AttentionKernel|KernelsOtherTunings|SampleKernel|SampleDegenerate|SamplePlateauCut|SampleNoTopKRefine|SampleFixedPointCut|E2EStories|E2EWhisperJFK'
{ nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
  echo "== cuda.test ^TestGPU (not SharedByTwoModels: its f16 Whisper file does not fit the carry) at $(el) s"
  timeout 150 ./cuda.test -test.run '^TestGPU' -test.skip 'SharedByTwoModels' -test.v -test.count=1 2>&1 | grep -E '^(=== RUN|\s*--- |ok|FAIL|PASS|panic)|GB/s|Error|launches|expected|actual'; echo "exit ${PIPESTATUS[0]}"
  for mode in normal permuted poison; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261129";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== msltest $mode ($E) at $(el) s"; env $E HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.run "^Test($CH)\$" -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|draws|worst'; echo "exit ${PIPESTATUS[0]}"
  done; echo "== done at $(el) s"; } > $OUT/tests.log 2>&1
cat $OUT/tests.log
