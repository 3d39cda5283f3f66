#!/bin/bash
# Issue #34's Whisper decoder row, round 6 (LayerNorm in the products), branch wd35, call 1 of 3 on a fresh machine,
# from the lead's checkout root (main's tree; the branch's files travel in $K): K=.gpu/wd35/c1 bash $K/call1.sh.
# $K holds msltest.test.xz (the branch, -tags hark_nocubin: it reads $W/cubin), kernels*.ptx.gz (the branch's PTX
# modules, the native ones unchanged from main), ptxpdl.xz (cuda/ptxpdl/ptxpdl), data.tar.xz (jfk.wav/.txt, stories260K and its golden file) and q8.xz.00
# (the kit tiny.en q8_0 model's xz, first part). Makes the cubins of the branch's PTX with main's
# bench/cuda/cubins.sh, then runs the changed kernels' msltest tests
# through CUDA on them, normal, permuted-block (HARK_CUDA_PERMUTE=20261201) and NaN-poisoned (HARK_CUDA_POISON=1),
# the three modes side by side. $OUT gets the kernels module's cubins and SOURCE (for cuda/cubin), call1.log and
# the tests' -v logs (8 files: the device tool's limit).
set -u
R=$(pwd); K=${K:-.gpu/wd35/c1}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=${W:-/w/wd35}
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/shared/whisper-kit/models $W/v $W/src/cuda && cd $W
xz -dc $K/msltest.test.xz > msltest.test && chmod +x msltest.test
xz -dc $K/ptxpdl.xz > ptxpdl && chmod +x ptxpdl
cp $K/q8.xz.00 $W/
tar -C $W/shared -xJf $K/data.tar.xz
cp $K/kernels.ptx.gz $K/kernels_sm80.ptx.gz $K/kernels_sm90a.ptx.gz src/cuda/
{ nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem --format=csv,noheader
  (cd src && OUT=$W PTXPDL=$W/ptxpdl timeout 240 bash $R/bench/cuda/cubins.sh) 2>&1
  echo "cubins done at $(el) s"; } > $W/call1-cubins.log 2>&1
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$W/cubin
MT='^Test(LayerNormMatVec|FusedMatVecAllTypes|RepackedWeights|Aligned16Loads|MatVecGELUOut|MatVecAllTypes|MatVecTuning|NormKernels|E2EStories)$'
{ echo "== tests at $(el) s"
  for m in normal permuted poison; do
    case $m in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
    ( env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 240 ./msltest.test -test.run "$MT" -test.v -test.count=1 > v/msl-$m.v.log 2>&1; echo "exit $? at $(el) s" >> v/msl-$m.v.log ) &
  done; wait
  for m in normal permuted poison; do
    echo "-- msl $m: $(tail -1 v/msl-$m.v.log), passed $(grep -c -- '--- PASS' v/msl-$m.v.log)"
    grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)' v/msl-$m.v.log | head
    grep -E 'layer_norm_mat_vec' v/msl-$m.v.log | awk '{for(i=1;i<=NF;i++) if($i=="exact"){print $(i+1)}}' | sort -g | tail -1 | sed "s/^/   largest layer_norm_mat_vec error vs exact: /"
  done; echo "== done at $(el) s"; } > $W/call1-tests.log 2>&1
cat $W/call1-cubins.log $W/call1-tests.log > $OUT/call1.log
(cd v && tar -cJf $OUT/call1-test-logs.tar.xz *.v.log)
cp $W/cubin/kernels.*.cubin.xz $W/cubin/SOURCE $OUT/
cat $OUT/call1.log
