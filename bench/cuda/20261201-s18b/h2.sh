#!/bin/bash
# Second GPU check of the eighteenth session (after branch gelu34's merge), call 2 of 3 (h1 = ../20261201-s18/g1.sh
# on a fresh machine: cubins of the merged PTX, the kit model's first two parts and the test data staged in /w/s18):
# the model's last part, then the mat-vec kernels' msltest tests (gelu34's FlagGELUOut among them) and
# TestE2EWhisperJFK through CUDA in normal, permuted-block and NaN-poisoned runs (the list of
# bench/cuda/20261201-gelu34/call.sh). $K holds q8.xz.02, msltest.test.xz.
set -u
R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/s18}; S=$(date +%s); mkdir -p $OUT
el() { echo $(( $(date +%s) - S )); }
[ -d $W/shared/llm-kit ] || { echo "not h1's machine"; exit 3; }
W=$W bash bench/cuda/20261201-s17/stage.sh > /dev/null
cd $W && cp -n q8.bin shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
T='^Test(MatVecGELUOut|MatVecAllTypes|FusedMatVecAllTypes|MatVecQ8Activations|RepackedWeights|RopeAttentionMatVecKernel|E2EWhisperJFK|E2EStories|AttentionKernel|AttentionTicketAligned)$'
{ for mode in normal permuted poison; do
  case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
  echo "== msltest $mode ($E) at $(el) s"
  env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 150 ./msltest.test -test.run "$T" -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)' $OUT/msltest-$mode.v.log | grep -v -- '--- PASS' | head; echo "passed: $(grep -c -- '--- PASS' $OUT/msltest-$mode.v.log)"
  grep -E 'beams [15]: msltest on cuda' $OUT/msltest-$mode.v.log | cut -c1-200
done; echo "== done at $(el) s"; } > $OUT/h2-tests.log 2>&1
(cd $OUT && tar -czf h2-test-logs.tgz *.v.log && rm *.v.log)
cat $OUT/h2-tests.log
