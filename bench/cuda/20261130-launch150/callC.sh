#!/bin/bash
# Issue #34 round 10 (branch launch150), call C on the H200, right after call B on the warm machine (the PTX already
# JIT-compiled there): the cuda package's TestGPUStoriesReplay (stories260K's golden tokens and the CPU's sampled
# tokens with graphs and chaining, graphs only, per dispatch), normal, permuted-block and NaN-poisoned. Run from the
# repository root with $K holding cuda.test.xz and data.tar.xz.
set -u
K=${K:-.gpu/launch150c}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared && cd /w
xz -dc $K/cuda.test.xz > cuda.test && chmod +x cuda.test
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared
for mode in normal permuted poison; do
  case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261130";; poison) E="HARK_CUDA_POISON=1";; esac
  echo "== cuda.test $mode ($E) at $(el) s"
  env $E timeout 20 ./cuda.test -test.run '^TestGPUStoriesReplay$' -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' | head -20
done 2>&1 | tee $OUT/tests-cuda.log
