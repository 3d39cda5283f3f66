#!/bin/bash
# Not run (this session's device time was spent): the GPU check of one of this folder's patches, P=rm
# (remove-layer-norm-mat-vec.patch: the mat-vec kernels whose PTX the removal touches, their x3 binding gone) or
# P=a16 (next-cross-attention.patch: attention_ticket_f32_a16 and the 16-key value batches). Build from the branch
# with the patch applied, after `go generate ./engine/plan && go generate ./cuda`: msltest.test and hark
# (-tags hark_nocubin), xz'd into $K as msltest.test.xz and hark-$P.xz, with hark-main.xz (main's binary); the kit
# model and jfk staged in $W by call1.sh/call2.sh. The patched PTX differs from the cubins: the first process
# JIT-compiles (30-90 s). Runs the patch's kernel tests and TestE2EWhisperJFK in normal, permuted and poisoned runs,
# then the decoder token against main (2 rounds); for a16 also a graphs-off profile and ncu on the aligned ticket.
set -u
K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/wdec34}; S=$(date +%s); mkdir -p $OUT
el() { echo $(( $(date +%s) - S )); }
case ${P:-} in
  rm) T='^Test(MatVecAllTypes|FusedMatVecAllTypes|RepackedWeights|Aligned16Loads|MatVecTuning|RopeAttentionMatVecKernel|E2EWhisperJFK)$';;
  a16) T='^Test(AttentionTicketAligned|AttentionKernel|AttentionMergeChunks|RopeAttentionKernel|KernelsOtherTunings|AttentionPagedKernel|E2EWhisperJFK)$';;
  *) echo "P=rm or P=a16"; exit 2;;
esac
[ -e $W/q8.bin ] || { echo "no staged model"; exit 3; }
cd $W && for f in msltest.test hark-$P hark-main; do xz -dc $K/$f.xz > $f && chmod +x $f; done
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
for mode in normal permuted poison; do
  case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
  echo "== msltest $mode ($E) at $(el) s"
  env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 200 ./msltest.test -test.run "$T" -test.short -test.v -test.count=1 > $OUT/$P-msltest-$mode.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)' $OUT/$P-msltest-$mode.v.log | grep -v -- '--- PASS' | head; echo "passed: $(grep -c -- '--- PASS' $OUT/$P-msltest-$mode.v.log)"
done
B="bench whisper --backend cuda --model q8.bin --audio shared/audio/jfk.wav --tokens 64 -r 3"
for r in 1 2; do for b in main $P; do echo "== round $r $b at $(el) s"; ./hark-$b $B 2>&1 | grep -E 'decode \(|encode \(|samples decode'; done; done | tee $OUT/$P-bench.log
[ $P = a16 ] || exit 0
HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 ./hark-a16 $B > $OUT/a16-profile.log 2>&1
HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 ncu --set full -k regex:attention_ticket_f32 -c 2 -o $OUT/a16-cross -f \
  ./msltest.test -test.run '^TestAttentionTicketAligned$' -test.count=1 > $OUT/a16-ncu.log 2>&1
ncu -i $OUT/a16-cross.ncu-rep --page details > $OUT/a16-cross-details.txt 2>&1; rm -f $OUT/a16-cross.ncu-rep
grep -A10 'decode profile' $OUT/a16-profile.log; grep -E 'hark_|Duration' $OUT/a16-cross-details.txt
