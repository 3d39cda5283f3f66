#!/bin/bash
# Issue #36 (branch rank36), first call: msltest's TestWhisperBeamsKernel through CUDA (HARK_MSLTEST_DEVICE=cuda),
# normal, permuted-block and NaN-poisoned runs side by side (each process JIT-compiles the branch's base PTX; the
# driver's cache then serves call2.sh). It leaves msltest.test, the data and the first part of the kit model's xz
# (the transfer's room: the model's xz is split over the two calls) in /w/r36 for call2.sh. Run from the repository
# root (main's checkout: its cuda/cubin serve the native modules) with $K holding msltest.test.xz, wq8.part1 and
# data.tar.xz (audio/jfk.wav, audio/jfk.txt).
set -u
K=${K:-.gpu/rank36}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
export HARK_CUDA_CUBIN_DIR=$PWD/cuda/cubin
mkdir -p $OUT /w/r36/shared/whisper-kit/models && cd /w/r36
xz -dc $K/msltest.test.xz > msltest.test && chmod +x msltest.test
tar -C shared -xJf $K/data.tar.xz
cp $K/wq8.part1 /w/r36/wq8.part1
echo "unpacked at $(el) s"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
run() {
  E=$(modeenv $1)
  env $E HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.run '^TestWhisperBeamsKernel$' -test.v -test.count=1 > $OUT/beams-$1.v.log 2>&1
  echo "== msltest TestWhisperBeamsKernel $1 ($E): exit $? at $(el) s"
  grep -E '^(--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/beams-$1.v.log | head -20
  echo "subtests passed: $(grep -c -- '    --- PASS' $OUT/beams-$1.v.log), failed: $(grep -c -- '--- FAIL' $OUT/beams-$1.v.log)"
}
run normal > $OUT/n.txt & run permuted > $OUT/p.txt & run poison > $OUT/q.txt & wait
cat $OUT/n.txt $OUT/p.txt $OUT/q.txt
(cd $OUT && tar -czf call1-test-logs.tgz *.v.log && rm -f *.v.log n.txt p.txt q.txt)
echo "== done at $(el) s"
