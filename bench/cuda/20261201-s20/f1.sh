#!/bin/bash
# Twentieth session's GPU call 1 of 2 on a fresh machine (run twice: with the early trigger, then wait-only): programmatic
# dependent launch (cuda/pdl.go, cuda/ptxpdl).
# The cubins made by bench/cuda/cubins.sh with PTXPDL (the sm_90 and sm_90a ones from the PTX's PDL form; SOURCE
# lines end in "pdl"), into $W/cubin, which the tests then use; then the tests through CUDA with PDL on: every
# msltest test and cuda's TestGPU* in a normal run, the sampler, paged, mat-vec and end-to-end subset and
# TestGPUBatchEqualsSequential / TestGPUStoriesReplay permuted-block and NaN-poisoned. $K holds ptxpdl.xz,
# msltest.test.xz, cuda.test.xz, data.tar.xz, q8.xz.00.
set -u
R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/s20}; S=$(date +%s); mkdir -p $OUT $W/shared/whisper-kit/models $W/v
el() { echo $(( $(date +%s) - S )); }
W=$W bash bench/cuda/20261201-s17/stage.sh > /dev/null
( PTXPDL=$W/ptxpdl OUT=$W bash bench/cuda/cubins.sh > /dev/null 2>&1; echo "cubins done at $(( $(date +%s) - S )) s" >> $W/cubins.log ) &
CB=$!
tar -C $W/shared -xJf $W/data.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/f1-machine.log 2>&1
wait $CB; cat $W/cubins.log >> $OUT/f1-machine.log
cd $W; export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$W/cubin
MT='^Test(Sample.*|AttentionPaged.*|PagedKernelsBadRow|RopeKVPagedKernel|E2EBatchPagedSplit|MatVecQ8Activations|RopeAttentionMatVecQ8Activations|RopeAttentionMatVecKernel|MatVecAllTypes|FusedMatVecAllTypes|RepackedWeights|MatVecTuning|E2EStories|Attention.*|LayerNorm.*|RMSNorm.*)$'
{ echo "== tests at $(el) s"
  ( timeout 250 ./cuda.test -test.run '^TestGPU' -test.v -test.count=1 > v/cuda-all.v.log 2>&1; echo "exit $? at $(el) s" >> v/cuda-all.v.log ) &
  ( HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 250 ./msltest.test -test.run . -test.v -test.count=1 > v/msl-all.v.log 2>&1; echo "exit $? at $(el) s" >> v/msl-all.v.log ) &
  wait
  for t in cuda-all msl-all; do echo "-- $t: $(tail -1 v/$t.v.log), passed $(grep -c -- '--- PASS' v/$t.v.log)"
    grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)' v/$t.v.log | head -20; done
  grep -h "PDL" v/cuda-all.v.log | head -3
  for m in permuted poison; do
    case $m in permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
    ( env $E timeout 150 ./cuda.test -test.run '^TestGPU(BatchEqualsSequential|StoriesReplay)$' -test.v -test.count=1 > v/cuda-$m.v.log 2>&1; echo "exit $? at $(el) s" >> v/cuda-$m.v.log ) &
    ( env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 150 ./msltest.test -test.run "$MT" -test.v -test.count=1 > v/msl-$m.v.log 2>&1; echo "exit $? at $(el) s" >> v/msl-$m.v.log ) &
    wait
    for t in cuda msl; do echo "-- $t $m ($E): $(tail -1 v/$t-$m.v.log), passed $(grep -c -- '--- PASS' v/$t-$m.v.log)"
      grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)' v/$t-$m.v.log | head; done
  done; echo "== done at $(el) s"; } > $OUT/f1-tests.log 2>&1
(cd v && tar -czf $OUT/f1-test-logs.tgz *.v.log)
(cd $W && tar -cf $OUT/cubin.tar cubin cubins.log)
cat $OUT/f1-machine.log $OUT/f1-tests.log
