#!/bin/bash
# Issue #36 (branch beam36), first call: msltest's Whisper tests on the GPU (HARK_MSLTEST_DEVICE=cuda) in normal,
# permuted-block and NaN-poisoned runs: TestE2EWhisperJFK without -short (greedy and beam 5 on CUDA against the CPU
# backend, both activations, and jfk.txt), the filter and track kernels, TestE2EStories. The normal run goes first
# (its process JIT-compiles the PTX, which main b7807e0 shares: the driver's cache then serves call2.sh's hark and
# hark0). It leaves the kit model and the data in /w/b36 for call2.sh. Run from the repository root with $K holding
# msltest.test.xz, wq8.xz (the kit's ggml-kit-tiny.en-q8_0.bin) and data.tar.xz.
set -u
K=${K:-.gpu/beam36}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/b36/shared/whisper-kit/models && cd /w/b36
xz -dc $K/msltest.test.xz > msltest.test && chmod +x msltest.test
tar -C shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/b36/shared
echo "unpacked at $(el) s"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
R='^Test(E2EWhisperJFK|E2EStories|WhisperFilterKernel|WhisperTrackKernel)$'
run() {
  E=$(modeenv $1)
  env $E HARK_MSLTEST_DEVICE=cuda timeout 240 ./msltest.test -test.run "$R" -test.v -test.count=1 > $OUT/msltest-$1.v.log 2>&1
  echo "== msltest $1 ($E): exit $? at $(el) s"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|beams [15]:' $OUT/msltest-$1.v.log | head -30
}
run normal
run permuted > $OUT/p.txt & run poison > $OUT/q.txt & wait
cat $OUT/p.txt $OUT/q.txt
(cd $OUT && tar -czf call1-test-logs.tgz *.v.log && rm -f *.v.log p.txt q.txt)
echo "== done at $(el) s"
