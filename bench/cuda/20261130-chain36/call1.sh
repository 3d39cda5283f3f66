#!/bin/bash
# Issue #36, a Whisper window's greedy decode chained on the device (branch chain36), first call: msltest's
# whisper_track and whisper_filter kernel tests against the CPU backend and TestE2EWhisperJFK (the chained greedy
# window on CUDA against both CPU paths: text, tokens, segment times, word times; beam 5 too in the normal run),
# through CUDA (HARK_MSLTEST_DEVICE=cuda), in normal, permuted-block and NaN-poisoned runs side by side. The first
# process JIT-compiles the PTX (no cubins). It leaves the kit model in /w/c36 for call2.sh, issued on the warm
# machine. Run from the repository root with $K holding msltest.test.xz, wq8.xz and data.tar.xz.
set -u
K=${K:-.gpu/chain36}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/c36/shared/whisper-kit/models && cd /w/c36
xz -dc $K/msltest.test.xz > msltest.test && chmod +x msltest.test
tar -C shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/c36/shared
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
echo "unpacked at $(el) s"
R='^Test(WhisperTrackKernel|WhisperFilterKernel|E2EWhisperJFK)$'
run() { # mode env short
  env $2 HARK_MSLTEST_DEVICE=cuda timeout 200 ./msltest.test $3 -test.run "$R" -test.v -test.count=1 > $OUT/msltest-$1.v.log 2>&1
  echo "== msltest $1 ($2 $3): exit $? at $(el) s"
}
run normal "" "" > $OUT/m-normal.txt &
sleep 2 # the normal run starts the JIT first
run permuted HARK_CUDA_PERMUTE=20261130 -test.short > $OUT/m-permuted.txt &
run poison HARK_CUDA_POISON=1 -test.short > $OUT/m-poison.txt &
wait
for mode in normal permuted poison; do
  cat $OUT/m-$mode.txt
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|beams [15]:' $OUT/msltest-$mode.v.log | head -40
done
rm -f $OUT/m-*.txt
(cd $OUT && tar -czf call1-test-logs.tgz *.v.log && rm *.v.log)
echo "== done at $(el) s"
