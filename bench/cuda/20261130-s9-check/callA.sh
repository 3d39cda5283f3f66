#!/bin/bash
# Lead's check of the merged tree after issue #35's third round (2026-11-30, ninth session), first of two calls
# back to back: TestE2EWhisperLongForm on the GPU (the 6.5-min long-form file, greedy and beam 5, every window
# with the CPU's tokens forced; not run in issue 35's rounds: the file was not carried) in a normal and a
# permuted-block run, then msltest's tensor-core and end-to-end tests in a NaN-poisoned run.
# Run from the repository root with $K holding msltest.test.xz, lf.wav.xz (shared/audio's long-form WAV),
# wq8.xz (the kit q8_0 model) and data.tar.xz (README.md says how they were made).
set -u
K=${K:-.gpu/v9a}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models /w/shared/audio && cd /w
xz -dc $K/msltest.test.xz > msltest.test && chmod +x msltest.test
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
xz -dc $K/lf.wav.xz > shared/audio/ljspeech-longform-LJ001-0021-0076.wav
export HARK_TESTDATA=/w/shared
nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.sm,clocks.mem --format=csv
for mode in normal permuted; do
  case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261130";; esac
  echo "== msltest TestE2EWhisperLongForm $mode ($E) at $(el) s"
  env $E HARK_MSLTEST_DEVICE=cuda timeout 240 ./msltest.test -test.run '^TestE2EWhisperLongForm$' -test.v -test.count=1 > $OUT/longform-$mode.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|WER|windows|worst|near' $OUT/longform-$mode.v.log | head -30
done
CH='Conv1DTensorCores|Conv1DAllTypes|MatMulTensorCores|MatMulAllTypes|AttentionTensorCores|AttentionKernel|E2EStories|E2EWhisperJFK'
echo "== msltest poison (tensor-core and end-to-end tests) at $(el) s"
HARK_CUDA_POISON=1 HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.run "^Test($CH)\$" -test.v -test.count=1 > $OUT/msltest-poison.v.log 2>&1; echo "exit $?"
grep -E '^(--- |ok|FAIL|PASS|panic)' $OUT/msltest-poison.v.log | head -20
echo "== end at $(el) s"
