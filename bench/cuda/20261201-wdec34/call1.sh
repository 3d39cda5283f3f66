#!/bin/bash
# wdec34 call 1 of 2 (a fresh machine): stages the kit model's first two xz parts, msltest.test (branch wdec34,
# -tags hark_nocubin: its PTX is main 78e82cd's, so the checkout's cubins serve it, nothing JIT-compiles) and
# jfk.wav/txt into $W; then the attention kernels' msltest tests through CUDA with the device's tuning (the cuda
# family: AttnTicketRound 8) in normal, permuted-block and NaN-poisoned runs. $K is the carried folder.
set -u
K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/wdec34}; S=$(date +%s); mkdir -p $OUT $W/shared/audio $W/shared/whisper-kit/models
el() { echo $(( $(date +%s) - S )); }
cp $K/q8.xz.0? $W/ && cp $K/jfk.wav $K/jfk.txt $W/shared/audio/ && xz -dc $K/msltest.test.xz > $W/msltest.test && chmod +x $W/msltest.test
cd $W; ls -la
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
T='^Test(AttentionKernel|AttentionMergeChunks|RopeAttentionKernel|KernelsOtherTunings)$'
for mode in normal permuted poison; do
  case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
  echo "== msltest $mode ($E), device tuning, at $(el) s"
  env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 120 ./msltest.test -test.run "$T" -test.short -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$mode.v.log | grep -v -- '--- PASS' | head -20
  echo "passed: $(grep -c -- '--- PASS' $OUT/msltest-$mode.v.log)"
done
echo "== done at $(el) s"
