#!/bin/bash
# Final check, call 3 of 4 (f1-f2's machine): the GPU tests of the merged main on the cubins f1 made (committed in
# the checkout): msltest through CUDA with the device's tuning and cuda's GPU tests, in normal, permuted-block and
# NaN-poisoned runs, then TestE2EWhisperLongForm (greedy and beam 5). $K holds msltest.test.xz, cuda.test.xz,
# msltest.run (the msltest names).
set -u
R=$(pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=${W:-/w/s17}
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT; [ -e $W/excerpt.wav ] || { echo "not f1-f2's machine"; exit 3; }
bash bench/cuda/20261201-s17/stage.sh > /dev/null
cd $W
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
MR=$(cat msltest.run)
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261201";; poison) echo "HARK_CUDA_POISON=1";; esac; }
{ echo "== TestCubinGuard at $(el) s"; ./cuda.test -test.run '^TestCubinGuard$' -test.v 2>&1 | tail -2
  for mode in normal permuted poison; do
    E=$(modeenv $mode)
    echo "== msltest $mode ($E), device tuning, at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 100 ./msltest.test -test.run "^Test($MR)\$" -test.skip '^TestSampleExpFixedPoint$' -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$mode.v.log | grep -v -- '--- PASS' | head -20
    echo "passed: $(grep -c -- '--- PASS' $OUT/msltest-$mode.v.log)"
    G='^TestGPU(StoriesReplay|BatchEqualsSequential|SharedByTwoModels|WhisperChainHalt.*|.*Halt.*)$'; [ $mode = normal ] && G='^TestGPU(Errors|StoriesReplay|BatchEqualsSequential|SharedByTwoModels|.*Halt.*)$'
    echo "== cuda.test $mode ($E) at $(el) s"
    env $E timeout 100 ./cuda.test -test.run "$G" -test.v -test.count=1 > $OUT/cuda-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/cuda-$mode.v.log | grep -v -- '--- PASS' | head -12
    echo "passed: $(grep -c -- '--- PASS' $OUT/cuda-$mode.v.log)"
  done
  echo "== TestE2EWhisperLongForm, device tuning, at $(el) s"
  HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout $(( 560 - $(el) )) ./msltest.test -test.run '^TestE2EWhisperLongForm$' -test.v -test.count=1 > $OUT/longform.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|beams [15]:|near-tie' $OUT/longform.v.log | cut -c1-300 | head -30
  echo "== done at $(el) s"
} > $OUT/f3-tests.log 2>&1
(cd $OUT && tar -czf f3-test-logs.tgz *.v.log && rm *.v.log)
cat $OUT/f3-tests.log
