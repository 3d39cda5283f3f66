#!/bin/bash
# Final check, call 2 (call 1's machine): the kit model joined from its two halves, then msltest through CUDA on the
# merged main's cubins that call 1 made (/w/f/cubin), the device's own tuning (HARK_MSLTEST_DEVICE_TUNING=1), normal,
# permuted-block and NaN-poisoned runs (the patterns in $K/msltest.run). $K holds wq8.xz.b, msltest.test.xz
# (-tags hark_nocubin), msltest.run.
set -u
K=${K:-.gpu/f2}; K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/f
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT; cd $W && [ -d cubin ] || { echo "no $W/cubin: not call 1's machine"; exit 3; }
cat wq8.xz.a $K/wq8.xz.b | xz -dc > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin && rm wq8.xz.a
sha256sum shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin > $OUT/tests.log
xz -dc $K/msltest.test.xz > msltest.test && chmod +x msltest.test
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$W/cubin
MR=$(cat $K/msltest.run)
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
{
  for mode in normal permuted poison; do
    E=$(modeenv $mode)
    echo "== msltest $mode ($E), device tuning, at $(el) s: $MR"
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 120 ./msltest.test -test.run "^Test($MR)\$" -test.skip '^TestSampleExpFixedPoint$' -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$mode.v.log | grep -v -- '--- PASS' | head -20
    echo "passed: $(grep -c -- '--- PASS' $OUT/msltest-$mode.v.log)"
  done
  echo "== msltest HARK_CUDA_NATIVE=0 (the MSL twins of the native kernels, translated) at $(el) s"
  HARK_CUDA_NATIVE=0 HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 100 ./msltest.test -test.run '^Test(MatMulBigTensorCores|AttentionTensorCores|MatMulTensorCores|MatMulInt8)$' -test.v -test.count=1 > $OUT/msltest-nonative.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-nonative.v.log | grep -v -- '--- PASS' | head -12
  echo "passed: $(grep -c -- '--- PASS' $OUT/msltest-nonative.v.log)"
  echo "== done at $(el) s"
} >> $OUT/tests.log 2>&1
(cd $OUT && tar -czf test-logs.tgz *.v.log && rm *.v.log)
cat $OUT/tests.log
