#!/bin/bash
# ln34 (issue #34), call 1 of 3 on one machine (a call carries the checkout plus ~18 MiB): stage the kit model's
# first two parts (q8.xz.00-01) and the branch's msltest binary from the carried folder $K into $W, then msltest's
# kernel tests through CUDA (the device's tuning) in normal, permuted-block and NaN-poisoned runs: TestMatVecNormOut
# (MatVec's FlagNormOut: the ticketed mat_vec_norm_* and mat_vec_norm_rows) and the mat-vec and norm tests beside
# it. The branch's PTX differs from main's cubins: the first process JIT-compiles the base module (its time is the
# normal run's), later ones (and calls 2-3) hit the driver's cache. TestE2EWhisperJFK is call 2's (the model).
set -u
K=$(cd "${K:-.gpu/ln34}" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/ln34}; S=$(date +%s); mkdir -p $OUT $W
el() { echo $(( $(date +%s) - S )); }
cd $W; cp -n $K/* $W/ 2>/dev/null
[ -e msltest.test ] || xz -dc msltest.test.xz > msltest.test; chmod +x msltest.test
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/call1-tests.log
export HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
T='^Test(MatVecNormOut|MatVecGELUOut|MatVecAllTypes|FusedMatVecAllTypes|RepackedWeights|NormKernels|MatrixFunctionsExist)$'
{ for mode in normal permuted poison; do
  case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
  echo "== msltest $mode ($E) at $(el) s"
  env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 240 ./msltest.test -test.run "$T" -test.short -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)' $OUT/msltest-$mode.v.log | grep -v -- '--- PASS' | head; echo "passed: $(grep -c -- '--- PASS' $OUT/msltest-$mode.v.log)"
  grep -E 'matvec_norm_test.go.*(q8_0 n=384 m=1|q6_k n=384 m=1)' $OUT/msltest-$mode.v.log | cut -c1-160
done; echo "== done at $(el) s"; } >> $OUT/call1-tests.log 2>&1
(cd $OUT && tar -czf call1-test-logs.tgz *.v.log && rm *.v.log)
cat $OUT/call1-tests.log
