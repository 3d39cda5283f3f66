#!/bin/bash
# Not run (this session's device time was spent): the GPU check and measurement of next-cross-attention.patch
# (attention_ticket_f32_a16: q and the K rows in float4 loads; the values of every Attention form with up to 64 dims
# in 16-key batches with a clamped last batch). Build from the branch with the patch applied, after
# `go generate ./cuda`: msltest.test and hark (-tags hark_nocubin), xz'd into $K as msltest.test.xz and hark-a16.xz,
# with hark-main.xz; the kit model and jfk staged in $W by call1.sh/call2.sh. The patched PTX differs from the cubins:
# the first process JIT-compiles (30-90 s). Then: the attention kernels in normal, permuted and poisoned runs and
# TestE2EWhisperJFK; the decoder token against main (2 rounds); ncu on the aligned ticket launch.
set -u
K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/wdec34}; S=$(date +%s); mkdir -p $OUT
el() { echo $(( $(date +%s) - S )); }
[ -e $W/q8.bin ] || { echo "no staged model"; exit 3; }
cd $W && for f in msltest.test hark-a16 hark-main; do xz -dc $K/$f.xz > $f && chmod +x $f; done
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
T='^Test(AttentionTicketAligned|AttentionKernel|AttentionMergeChunks|RopeAttentionKernel|KernelsOtherTunings|AttentionPagedKernel|E2EWhisperJFK)$'
for mode in normal permuted poison; do
  case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
  echo "== msltest $mode ($E) at $(el) s"
  env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 200 ./msltest.test -test.run "$T" -test.short -test.v -test.count=1 > $OUT/a16-msltest-$mode.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)' $OUT/a16-msltest-$mode.v.log | grep -v -- '--- PASS' | head; echo "passed: $(grep -c -- '--- PASS' $OUT/a16-msltest-$mode.v.log)"
done
B="bench whisper --backend cuda --model q8.bin --audio shared/audio/jfk.wav --tokens 64 -r 3"
for r in 1 2; do for b in main a16; do echo "== round $r $b at $(el) s"; ./hark-$b $B 2>&1 | grep -E 'decode \(|encode \(|samples decode'; done; done | tee $OUT/a16-bench.log
HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 ./hark-a16 bench whisper --backend cuda --model q8.bin --audio shared/audio/jfk.wav --tokens 64 -r 1 > $OUT/a16-profile.log 2>&1
HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 ncu --set full -k regex:attention_ticket_f32 -c 2 -o $OUT/a16-cross -f \
  ./msltest.test -test.run '^TestAttentionTicketAligned$' -test.count=1 > $OUT/a16-ncu.log 2>&1
ncu -i $OUT/a16-cross.ncu-rep --page details > $OUT/a16-cross-details.txt 2>&1; rm -f $OUT/a16-cross.ncu-rep
grep -A10 'decode profile' $OUT/a16-profile.log; grep -E 'hark_|Duration' $OUT/a16-cross-details.txt
