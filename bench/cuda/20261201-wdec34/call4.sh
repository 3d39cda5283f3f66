#!/bin/bash
# Not run (this session's device time was spent): the GPU check of remove-layer-norm-mat-vec.patch. Build from the
# branch with the patch applied, after `go generate ./engine/plan && go generate ./cuda`: msltest.test and hark
# (-tags hark_nocubin), xz'd into $K as msltest.test.xz and hark-rm.xz, with hark-main.xz (main's binary); the kit
# model and jfk staged in $W by call1.sh/call2.sh (or stage.sh). The patched PTX differs from the cubins: the first
# process JIT-compiles (30-90 s). Checks the mat-vec kernels whose PTX the removal touches (their x3 binding goes) in
# normal, permuted and poisoned runs, TestE2EWhisperJFK, then the decoder token against main's binary.
set -u
K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/wdec34}; S=$(date +%s); mkdir -p $OUT
el() { echo $(( $(date +%s) - S )); }
[ -e $W/q8.bin ] || { echo "no staged model"; exit 3; }
cd $W && for f in msltest.test hark-rm hark-main; do xz -dc $K/$f.xz > $f && chmod +x $f; done
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
T='^Test(MatVecAllTypes|FusedMatVecAllTypes|RepackedWeights|Aligned16Loads|MatVecTuning|RopeAttentionMatVec.*|E2EWhisperJFK)$'
for mode in normal permuted poison; do
  case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
  echo "== msltest $mode ($E) at $(el) s"
  env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 200 ./msltest.test -test.run "$T" -test.short -test.v -test.count=1 > $OUT/rm-msltest-$mode.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)' $OUT/rm-msltest-$mode.v.log | grep -v -- '--- PASS' | head; echo "passed: $(grep -c -- '--- PASS' $OUT/rm-msltest-$mode.v.log)"
done
B="bench whisper --backend cuda --model q8.bin --audio shared/audio/jfk.wav --tokens 64 -r 3"
for r in 1 2; do for b in main rm; do echo "== round $r $b at $(el) s"; ./hark-$b $B 2>&1 | grep -E 'decode \(|encode \(|samples decode'; done; done | tee $OUT/rm-bench.log
