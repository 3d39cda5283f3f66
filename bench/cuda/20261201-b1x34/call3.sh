#!/bin/bash
# Issue #34, branch b1x34, call 3: the changed kernels' tests on the GPU in normal, permuted-block and NaN-poisoned
# runs. From the repository root: K=.gpu/b1x34t bash $K/call3.sh, $K holding msltest.test.xz and cuda.test.xz (the
# branch's, -tags hark_nocubin), cubin/ (call 2's ptxas -O3 sm_90 cubin of the branch's PTX, SOURCE, and 3d3a2c5's
# sm80/sm90a cubins: the native modules are unchanged) and data.tar.xz (stories260K, its golden file).
set -u
K=${K:-.gpu/b1x34t}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/shared && cd $W
for f in msltest.test cuda.test; do xz -dc $K/$f.xz > $f && chmod +x $f; done
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$K/cubin
T='^Test(MatVecQ8Activations|RopeAttentionMatVecQ8Activations|RopeAttentionMatVecKernel|MatVecAllTypes|FusedMatVecAllTypes|RepackedWeights|Aligned16Loads|E2EStories)$'
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for mode in normal permuted poison; do
  case $mode in normal) E="X=1";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
  echo "== msltest $mode ($E) at $(el) s"
  env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 150 ./msltest.test -test.run "$T" -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)' $OUT/msltest-$mode.v.log | grep -v -- '--- PASS' | head; echo "passed: $(grep -c -- '--- PASS' $OUT/msltest-$mode.v.log)"
  grep -E 'JIT|preparing' $OUT/msltest-$mode.v.log | head -2
  echo "== cuda TestGPUStoriesReplay $mode at $(el) s"
  env $E timeout 120 ./cuda.test -test.run '^TestGPUStoriesReplay$' -test.v -test.count=1 > $OUT/cuda-$mode.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)' $OUT/cuda-$mode.v.log | head
done; echo "== done at $(el) s"; } > $OUT/tests.log 2>&1
(cd $OUT && tar -czf test-logs.tgz *.v.log && rm *.v.log)
cat $OUT/tests.log
grep -hE 'q8x|Q8Activations' /dev/null
