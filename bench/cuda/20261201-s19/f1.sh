#!/bin/bash
# Nineteenth session's GPU check, call 1 of 2 on a fresh machine (main 84ae6e0: grid38, ln34, b1x34 merged): the
# cubins of the merged PTX (bench/cuda/cubins.sh, into $W/cubin, which the tests then use), then the changed
# kernels' tests through CUDA in normal, permuted-block and NaN-poisoned runs: msltest (grid38's sampler and paged
# tests, b1x34's 8-bit-activation mat-vecs, the mat-vec families, stories260K's golden tokens) and cuda's
# TestGPUBatchEqualsSequential / TestGPUStoriesReplay. $K holds msltest.test.xz, cuda.test.xz, data.tar.xz, q8.xz.00.
set -u
R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/s19}; S=$(date +%s); mkdir -p $OUT $W/shared/whisper-kit/models $W/v
el() { echo $(( $(date +%s) - S )); }
( OUT=$W bash bench/cuda/cubins.sh > /dev/null 2>&1; echo "cubins done at $(( $(date +%s) - S )) s" >> $W/cubins.log ) &
CB=$!
W=$W bash bench/cuda/20261201-s17/stage.sh > /dev/null
tar -C $W/shared -xJf $W/data.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/f1-machine.log 2>&1
wait $CB; cat $W/cubins.log >> $OUT/f1-machine.log
cd $W; export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$W/cubin
MT='^Test(Sample.*|AttentionPaged.*|PagedKernelsBadRow|RopeKVPagedKernel|E2EBatchPagedSplit|MatVecQ8Activations|RopeAttentionMatVecQ8Activations|RopeAttentionMatVecKernel|MatVecAllTypes|FusedMatVecAllTypes|RepackedWeights|Aligned16Loads|MatVecGELUOut|MatVecTuning|E2EStories)$'
{ echo "== tests at $(el) s"
  for m in normal permuted poison; do
    case $m in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
    ( env $E timeout 200 ./cuda.test -test.run '^TestGPU(BatchEqualsSequential|StoriesReplay)$' -test.v -test.count=1 > v/cuda-$m.v.log 2>&1; echo "exit $? at $(el) s" >> v/cuda-$m.v.log ) &
    ( env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 200 ./msltest.test -test.run "$MT" -test.v -test.count=1 > v/msl-$m.v.log 2>&1; echo "exit $? at $(el) s" >> v/msl-$m.v.log ) &
    wait
    for t in cuda msl; do echo "-- $t $m ($E): $(tail -1 v/$t-$m.v.log), passed $(grep -c -- '--- PASS' v/$t-$m.v.log)"
      grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)' v/$t-$m.v.log | head; done
  done; echo "== done at $(el) s"; } > $OUT/f1-tests.log 2>&1
(cd v && tar -czf $OUT/f1-test-logs.tgz *.v.log)
(cd $W && tar -cf $OUT/cubin.tar cubin)
cat $OUT/f1-machine.log $OUT/f1-tests.log
