#!/bin/bash
# Issue #36 (branch rank36), first call: msltest through CUDA (HARK_MSLTEST_DEVICE=cuda), normal, permuted-block
# and NaN-poisoned runs side by side (each process JIT-compiles the branch's base PTX once; the driver's cache then
# serves call2.sh's hark): TestWhisperBeamsKernel and TestE2EWhisperJFK without -short (greedy and beam 5 against
# the CPU backend, both activations, and jfk.txt). It leaves the kit model and the data in /w/r36 for call2.sh.
# Run from the repository root (main's checkout: its cuda/cubin serve the native modules) with $K holding
# msltest.test.xz, wq8.xz (the kit's ggml-kit-tiny.en-q8_0.bin) and data.tar.xz (audio/jfk.wav, audio/jfk.txt).
set -u
K=${K:-.gpu/rank36}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
export HARK_CUDA_CUBIN_DIR=$PWD/cuda/cubin
mkdir -p $OUT /w/r36/shared/whisper-kit/models && cd /w/r36
xz -dc $K/msltest.test.xz > msltest.test && chmod +x msltest.test
tar -C shared -xJf $K/data.tar.xz
xz -T0 -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/r36/shared
echo "unpacked at $(el) s"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
R='^Test(E2EWhisperJFK|WhisperBeamsKernel)$'
run() {
  E=$(modeenv $1)
  env $E HARK_MSLTEST_DEVICE=cuda timeout 200 ./msltest.test -test.run "$R" -test.v -test.count=1 > $OUT/msltest-$1.v.log 2>&1
  echo "== msltest $1 ($E): exit $? at $(el) s"
  grep -E '^(--- |ok|FAIL|PASS|panic)|Error|expected|actual|beams [15]:' $OUT/msltest-$1.v.log | head -30
  echo "subtests passed: $(grep -c -- '    --- PASS' $OUT/msltest-$1.v.log), failed: $(grep -c -- '--- FAIL' $OUT/msltest-$1.v.log)"
}
run normal > $OUT/n.txt & run permuted > $OUT/p.txt & run poison > $OUT/q.txt & wait
cat $OUT/n.txt $OUT/p.txt $OUT/q.txt
(cd $OUT && tar -czf call1-test-logs.tgz *.v.log && rm -f *.v.log n.txt p.txt q.txt)
echo "== done at $(el) s"
