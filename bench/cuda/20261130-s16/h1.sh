#!/bin/bash
# bf16 weights on the tensor cores (mat_mul_mma_bf16, cuda/native/mat_mul_mma.cu's wbf16), a fresh machine: the
# cubins made from this checkout's PTX (bench/cuda/cubins.sh; brought back as $OUT/cubin.tar), then msltest through
# CUDA on them, device tuning, normal, permuted-block and NaN-poisoned runs: TestMatMulTensorCores (bf16 added),
# TestMatMulTensorCoresBF16Range (new), TestConv1DTensorCores, TestMatMulBigTensorCores, TestE2EStories.
# $K holds msltest.test.xz (-tags hark_nocubin), data.tar.xz.
set -u
K=${K:-.gpu/h1}; K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/h
mkdir -p $OUT $W/shared && OUT=$W bash bench/cuda/cubins.sh > /dev/null 2>&1
cp $W/cubins.log $OUT/h1-cubins.log; (cd $W && tar -cf $OUT/cubin.tar cubin)
cd $W && xz -dc $K/msltest.test.xz > msltest.test && chmod +x msltest.test && tar -C shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$W/cubin
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
{ echo "== cubins done at $(( $(date +%s) - S )) s"
  for mode in normal permuted poison; do
    E=$(modeenv $mode)
    echo "== msltest $mode ($E) at $(( $(date +%s) - S )) s"
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 120 ./msltest.test -test.run '^Test(MatMulTensorCores|MatMulTensorCoresBF16Range|Conv1DTensorCores|MatMulBigTensorCores|E2EStories)$' -test.v -test.count=1 > $OUT/h1-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|bf16|BF16' $OUT/h1-$mode.v.log | grep -v -- '--- PASS' | head -20
    echo "passed: $(grep -c -- '--- PASS' $OUT/h1-$mode.v.log)"
  done
} > $OUT/h1-tests.log 2>&1
(cd $OUT && tar -czf h1-test-logs.tgz *.v.log && rm *.v.log)
cat $OUT/h1-tests.log; tail -4 $OUT/h1-cubins.log
