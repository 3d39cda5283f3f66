#!/bin/bash
# Session 29's second lead call: the sm80 module's cubins for main 93086e2 (b38s29's tensor-core multi-row mat-vec;
# the base and sm90a modules unchanged, so only sm80 is compiled: MODULES=sm80), then cuda.test's TestCubinGuard,
# TestGPUMatVecRows and TestGPUBatchEqualsSequential on them (the committed base/sm90a cubins beside the new sm80 ones).
# Short on purpose: the session's device budget was ~110 s. From the checkout's root: K=.gpu/lead29b bash
# bench/cuda/20261203-s29/call2.sh, $K holding ptxpdl.xz, cuda.test.xz (main 93086e2, -tags hark_nocubin), data.tar.xz.
set -u
R=$(pwd); K=${K:-.gpu/lead29b}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/lead29b
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/shared $W/cubin
for f in ptxpdl cuda.test; do xz -T4 -dc $K/$f.xz > $W/$f && chmod +x $W/$f; done
MODULES=sm80 PTXPDL=$W/ptxpdl bash bench/cuda/cubins.sh > /dev/null 2>&1; echo "cubins: exit $? at $(el) s"
cp cuda/cubin/*.xz $W/cubin/ && cp $OUT/cubin/*.xz $W/cubin/
{ grep -v '^sm80 ' cuda/cubin/SOURCE; cat $OUT/cubin/SOURCE; } | sort > $W/cubin/SOURCE && cp $W/cubin/SOURCE $OUT/cubin/SOURCE
tar -C $W/shared -xJf $K/data.tar.xz
cd $W && HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$W/cubin timeout 60 ./cuda.test -test.run '^(TestCubinGuard|TestGPUMatVecRows|TestGPUBatchEqualsSequential)$' -test.v -test.count=1 > $OUT/tests.log 2>&1
echo "tests: exit $? at $(el) s"; grep -E '^(--- |ok|FAIL|PASS|panic)|kernels from' $OUT/tests.log | head -12; cat $OUT/cubins.log
