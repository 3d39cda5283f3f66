#!/bin/bash
# Final check, call 2 (call 1's machine): tests of the merged main on the cubins call 1 made (/w/f/cubin), the device's
# own tuning (HARK_MSLTEST_DEVICE_TUNING=1), normal, permuted-block and NaN-poisoned runs: msltest through CUDA (the
# patterns in $K/msltest.run), cuda's GPU tests; then TestE2EWhisperLongForm (greedy and beam 5 against the
# float-activation CPU). $K holds msltest.test.xz, cuda.test.xz (-tags hark_nocubin), longform.flac, msltest.run.
set -u
K=${K:-.gpu/f2}; K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/f
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT; cd $W && [ -d cubin ] || { echo "no $W/cubin: not call 1's machine"; exit 3; }
for b in msltest.test cuda.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
./trim $K/longform.flac shared/audio/ljspeech-longform-LJ001-0021-0076.wav 100000
./trim $K/longform.flac excerpt.wav 204.2
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$W/cubin
MR=$(cat $K/msltest.run)
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
{ echo "== TestCubinGuard on call 1's cubins at $(el) s"; ./cuda.test -test.run '^TestCubinGuard$' -test.v 2>&1 | tail -2
  for mode in normal permuted poison; do
    E=$(modeenv $mode)
    echo "== msltest $mode ($E), device tuning, at $(el) s: $MR"
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 120 ./msltest.test -test.run "^Test($MR)\$" -test.skip '^TestSampleExpFixedPoint$' -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$mode.v.log | grep -v -- '--- PASS' | head -20
    echo "passed: $(grep -c -- '--- PASS' $OUT/msltest-$mode.v.log)"
    G='^TestGPU(StoriesReplay|BatchEqualsSequential|SharedByTwoModels)$'; [ $mode = normal ] && G='^TestGPU(Errors|StoriesReplay|BatchEqualsSequential|SharedByTwoModels)$'
    echo "== cuda.test $mode at $(el) s"
    env $E timeout 120 ./cuda.test -test.run "$G" -test.v -test.count=1 > $OUT/cuda-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/cuda-$mode.v.log | grep -v -- '--- PASS' | head -12
    echo "passed: $(grep -c -- '--- PASS' $OUT/cuda-$mode.v.log)"
  done
  echo "== TestE2EWhisperLongForm, device tuning, at $(el) s"
  HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout $(( 580 - $(el) )) ./msltest.test -test.run '^TestE2EWhisperLongForm$' -test.v -test.count=1 > $OUT/longform.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|beams [15]:|near-tie' $OUT/longform.v.log | cut -c1-300 | head -30
  echo "== done at $(el) s"
} > $OUT/tests.log 2>&1
(cd $OUT && tar -czf test-logs.tgz *.v.log && rm *.v.log)
cat $OUT/tests.log
