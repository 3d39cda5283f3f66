#!/bin/bash
# Issue #36 (branch dtw36), first call: word timing's kernels (WhisperAlign, TokenLogprob) against the CPU
# backend through CUDA, in normal, permuted and NaN-poisoned runs side by side (the first process JIT-compiles the
# branch's base module; the driver's cache serves the rest and call2.sh). It leaves msltest.test and the first
# part of data.tar.xz in /w/dtw36 for call2.sh on the warm machine: the kit model does not fit one transfer beside
# msltest.test and jfk.wav. Run from the repository root: K=.gpu/dtw36/c1 bash .gpu/dtw36/c1/call1.sh, $K holding
# msltest.test.xz and data.part1 (the first 18,000,000 bytes of data.tar.xz: audio/jfk.wav, audio/jfk.txt,
# whisper-kit/models/ggml-kit-tiny.en-q8_0.bin under data/).
set -u
K=${K:-.gpu/dtw36/c1}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
export HARK_CUDA_CUBIN_DIR=$PWD/cuda/cubin HARK_MSLTEST_DEVICE=cuda
mkdir -p $OUT /w/dtw36 && cd /w/dtw36
xz -dc $K/msltest.test.xz > msltest.test && chmod +x msltest.test
cp $K/data.part1 .
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
T='^(TestWhisperAlignKernel|TestTokenLogprobKernel)$'
run() { # mode env
  env $2 timeout 100 ./msltest.test -test.run "$T" -test.v -test.count=1 > $OUT/msltest-$1.v.log 2>&1
  echo "== msltest $1 ($2): exit $? at $(el) s"
}
run normal "" > $OUT/m-normal.txt &
run permuted HARK_CUDA_PERMUTE=20261130 > $OUT/m-permuted.txt &
run poison HARK_CUDA_POISON=1 > $OUT/m-poison.txt &
wait
for mode in normal permuted poison; do
  cat $OUT/m-$mode.txt
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$mode.v.log | head -30
done
rm -f $OUT/m-*.txt
(cd $OUT && tar -czf call1-test-logs.tgz *.v.log && rm *.v.log)
echo "== done at $(el) s"
