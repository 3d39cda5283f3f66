#!/bin/bash
# Lead's check of the merged tree (2026-11-30, twelfth session: #33 attention and Sample pass, #34 round 9, #35 round 6, the batch engine on CUDA), first
# call: the cuda package's GPU tests (normal, permuted-block, NaN-poisoned, HARK_CUDA_NATIVE=0) beside msltest's
# kernel and end-to-end tests on the GPU (HARK_MSLTEST_DEVICE=cuda; normal, permuted, poisoned), the two chains at
# once. Run from the repository root with $K holding cuda.test.xz, msltest.test.xz, wq8.xz and data.tar.xz.
set -u
K=${K:-.gpu/s12a}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in cuda.test msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; nonative) echo "HARK_CUDA_NATIVE=0";; esac; }
{ for mode in normal permuted poison nonative; do
    E=$(modeenv $mode); G='^TestGPU(StoriesReplay|SharedByTwoModels|MatMulWGMMALayout|BatchEqualsSequential)$'
    [ $mode = normal ] && G='^TestGPU(Errors|StoriesReplay|SharedByTwoModels|MatMulWGMMALayout|BatchEqualsSequential)$'
    echo "== cuda.test $mode ($E) at $(el) s"
    env $E timeout 100 ./cuda.test -test.run "$G" -test.v -test.count=1 > $OUT/cuda-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/cuda-$mode.v.log | head -20
  done; echo "== cuda done at $(el) s"; } > $OUT/tests-cuda.log 2>&1 &
C=$!
{ for mode in normal permuted poison; do
    E=$(modeenv $mode); CH='Sample.*|E2EStories|E2EWhisperJFK|MatMulBigTensorCores|MatMulTensorCores|AttentionMergeChunks|RopeKVPagedKernel|AttentionPagedKernel|PagedKernelsBadRow|RopeAttentionKernel|AttentionKernel'
    [ $mode = normal ] && CH="$CH|KernelsOtherTunings"
    echo "== msltest $mode ($E) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.short -test.run "^Test($CH)\$" -test.skip '^TestSampleExpFixedPoint$' -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$mode.v.log | grep -v -- '--- PASS' | head -30
    grep -c -- '--- PASS' $OUT/msltest-$mode.v.log
  done; echo "== msltest done at $(el) s"; } > $OUT/tests-msl.log 2>&1
wait $C
(cd $OUT && tar -czf test-logs.tgz *.v.log && rm *.v.log)
cat $OUT/tests-cuda.log $OUT/tests-msl.log
