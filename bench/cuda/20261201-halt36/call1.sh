#!/bin/bash
# Issue #36 (branch halt36), call 1 of 2 (a fresh machine), run from the lead's checkout (main 8c2ba3d: its
# cuda/cubin serve hark0; the branch's PTX differs from them, so each process's first load JIT-compiles it and the
# driver's cache then serves the later ones). Unpacks the binaries (hark and cuda.test/msltest.test of the branch,
# hark0 of main 8c2ba3d; all -tags hark_nocubin), stories260K and its golden generations, the trim tool and the
# 204.2-s excerpt of the long-form file (FLAC, written back as the 16-bit WAV; the whole file did not fit the
# call's transfer beside the checkout), then runs the GPU tests that
# need no Whisper model, normal, permuted-block and NaN-poisoned runs side by side: cuda's TestGPUChainHalt (a chain
# with and without its halt word on the GPU) and TestGPUStoriesReplay; msltest's TestE2EStories,
# TestWhisperBeamsKernel and TestWhisperTrackKernel on the device's own tuning. $K holds bins.tar.xz (hark, hark0,
# cuda.test, msltest.test), data-a.tar.xz, trim.xz, excerpt.flac.
set -u
K=${K:-.gpu/halt36a}; K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/h36
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/shared/audio $W/shared/whisper-kit/models && cd $W
tar -xJf $K/bins.tar.xz && tar -C shared -xJf $K/data-a.tar.xz
xz -dc $K/trim.xz > trim && chmod +x trim
./trim $K/excerpt.flac excerpt.wav 204.2
sha256sum hark hark0 cuda.test msltest.test excerpt.wav > $OUT/call1.log
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
echo "unpacked at $(el) s; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" >> $OUT/call1.log
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261201";; poison) echo "HARK_CUDA_POISON=1";; esac; }
summ() { grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $1 | grep -v -- '--- PASS' | head -12; echo "passed: $(grep -c -- '--- PASS' $1), failed: $(grep -c -- '--- FAIL' $1), skipped: $(grep -c -- '--- SKIP' $1)"; }
ct() { E=$(modeenv $1); env $E timeout 200 ./cuda.test -test.run '^TestGPU(ChainHalt|StoriesReplay)$' -test.v -test.count=1 > $OUT/cuda1-$1.v.log 2>&1; echo "== cuda.test $1 ($E): exit $? at $(el) s"; summ $OUT/cuda1-$1.v.log; }
mt() { E=$(modeenv $1); env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 200 ./msltest.test -test.run '^Test(E2EStories|WhisperBeamsKernel|WhisperTrackKernel)$' -test.v -test.count=1 > $OUT/msl1-$1.v.log 2>&1; echo "== msltest $1 ($E): exit $? at $(el) s"; summ $OUT/msl1-$1.v.log; }
for m in normal permuted poison; do ct $m > $OUT/c-$m.txt & mt $m > $OUT/m-$m.txt & done; wait
cat $OUT/c-*.txt $OUT/m-*.txt >> $OUT/call1.log; rm -f $OUT/c-*.txt $OUT/m-*.txt
grep -h "halt_gpu_test\|replay_gpu_test.go:117" $OUT/cuda1-*.v.log >> $OUT/call1.log
echo "== done at $(el) s" >> $OUT/call1.log
(cd $OUT && tar -czf call1-test-logs.tgz *.v.log && rm -f *.v.log)
cat $OUT/call1.log
