#!/bin/bash
# Issue #34 round 11 (branch fold34), call B on the H200 (after call A: the PTX already JIT-compiled): the fold's
# kernels on the GPU through msltest (HARK_MSLTEST_DEVICE=cuda: TestRopeAttentionMatVecKernel under the cuda family,
# folded and not, f32/f16/q8_0/q4_0 weights, repacked and not, against the CPU and a float64 reference;
# TestE2EStories, golden tokens under Default (two launches) and under the cuda family (folded)), and the cuda
# package's TestGPUStoriesReplay (golden and sampled tokens with graphs and chaining, graphs only, per dispatch: the
# folded f32 path), each normal, permuted-block and NaN-poisoned. Success: every line `exit 0` / `--- PASS`.
# Run from the repository root with $K holding msltest.test.xz, cuda.test.xz and data.tar.xz.
set -u
K=${K:-.gpu/fold34b}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared && cd /w
for b in msltest.test cuda.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared
{ for mode in normal permuted poison; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261130";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== msltest $mode ($E) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.run '^Test(RopeAttentionMatVecKernel|RopeAttentionKernel|E2EStories)$' \
      -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$mode.v.log | head -20
    echo "== cuda.test $mode ($E) at $(el) s"
    env $E timeout 60 ./cuda.test -test.run '^TestGPUStoriesReplay$' -test.v -test.count=1 > $OUT/cuda-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/cuda-$mode.v.log | head -20
  done; echo "== done at $(el) s"; } > $OUT/tests.log 2>&1
(cd $OUT && tar -czf test-logs.tgz *.v.log && rm *.v.log)
cat $OUT/tests.log
