#!/bin/bash
# Final check, call 3 (call 1's machine): the long-form file (the shared WAV and the 204.2-s excerpt written by trim),
# cuda's tests on call 1's cubins (TestCubinGuard, the GPU tests in normal, permuted-block and NaN-poisoned runs), then
# msltest's TestE2EWhisperLongForm (greedy and beam 5 against the float-activation CPU) on the device's own tuning.
# $K holds longform.flac, cuda.test.xz (-tags hark_nocubin).
set -u
K=${K:-.gpu/f3}; K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/f
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT; cd $W && [ -d cubin ] && [ -x msltest.test ] || { echo "no $W/cubin or msltest.test: not calls 1-2's machine"; exit 3; }
xz -dc $K/cuda.test.xz > cuda.test && chmod +x cuda.test
./trim $K/longform.flac shared/audio/ljspeech-longform-LJ001-0021-0076.wav 100000
./trim $K/longform.flac excerpt.wav 204.2
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$W/cubin
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
{ echo "== TestCubinGuard on call 1's cubins at $(el) s"; ./cuda.test -test.run '^TestCubinGuard$' -test.v 2>&1 | tail -2
  for mode in normal permuted poison; do
    E=$(modeenv $mode)
    G='^TestGPU(StoriesReplay|BatchEqualsSequential|SharedByTwoModels)$'; [ $mode = normal ] && G='^TestGPU(Errors|StoriesReplay|BatchEqualsSequential|SharedByTwoModels)$'
    echo "== cuda.test $mode ($E) at $(el) s"
    env $E timeout 120 ./cuda.test -test.run "$G" -test.v -test.count=1 > $OUT/cuda-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/cuda-$mode.v.log | grep -v -- '--- PASS' | head -12
    echo "passed: $(grep -c -- '--- PASS' $OUT/cuda-$mode.v.log)"
  done
  echo "== TestE2EWhisperLongForm, device tuning, at $(el) s"
  HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout $(( 580 - $(el) )) ./msltest.test -test.run '^TestE2EWhisperLongForm$' -test.v -test.count=1 > $OUT/longform.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|beams [15]:|near-tie' $OUT/longform.v.log | cut -c1-300 | head -30
  echo "== done at $(el) s"
} > $OUT/tests3.log 2>&1
(cd $OUT && tar -czf test-logs3.tgz *.v.log && rm *.v.log)
cat $OUT/tests3.log
