#!/bin/bash
# select36 call 2 (issue #36, the greedy selection across the GPU), lean (the device budget): branch select36's
# hark against itself with HARK_CUDA_TUNE=WhisperSegment=1073741824 (whisper_filter and whisper_track one
# threadgroup a row: main's geometry, the peer in the same call; main's own figures are the lead's
# bench/cuda/20261201-s17/l1-bench.log), on the lead's staged kit model and audio (/w/s17: q8.bin, jfk.wav,
# excerpt.wav). Carried in .gpu/select36: hark-new.xz, msltest.test.xz (-tags hark_nocubin), kernels.ptx.gz (the
# branch's PTX), jfk.txt; hark-new.xz may come first through the stage (/w/s17/hark-new, call2-stage.txt). The branch's base module is made by ptxas for sm_90 into a copy of main's cubin dir (its
# SOURCE line updated), so no driver JIT. Then the msltest Whisper kernel tests on the GPU, normal (with the JFK
# end-to-end test), permuted blocks, NaN-poisoned, in parallel.
set -u
R=$(pwd); K=$R/.gpu/select36; OUT=${OUT:-/tmp/out}; W=/w/s17; mkdir -p $OUT
ls $W; [ -e $W/q8.bin ] && [ -e $W/jfk.wav ] || { echo "not staged"; exit 3; }
T=/tmp/s36; rm -rf $T; mkdir -p $T/shared/whisper-kit/models $T/shared/audio && cd $T
if [ -x $W/hark-new ]; then cp $W/hark-new .; else xz -dc $K/hark-new.xz > hark-new && chmod +x hark-new; fi
xz -dc $K/msltest.test.xz > msltest.test && chmod +x msltest.test &
ln -s $W/q8.bin shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin; ln -s $W/jfk.wav shared/audio/jfk.wav; cp $K/jfk.txt shared/audio/
cp -r $R/cuda/cubin cb; gzip -dc $K/kernels.ptx.gz > k.ptx
export PATH=$PATH:/usr/local/cuda/bin
s=$(date +%s%N); ptxas -arch=sm_90 -O3 k.ptx -o k.cubin && xz -0 -T4 -c k.cubin > cb/kernels.sm_90.cubin.xz &&
  sed -i "s/^kernels .*/kernels $(sha256sum $K/kernels.ptx.gz | cut -d' ' -f1)/" cb/SOURCE; echo "ptxas+xz $(( ($(date +%s%N) - s) / 1000000 )) ms"
wait
export HARK_CUDA_CUBIN_DIR=$T/cb
TIMEFORMAT=%R
B="bench whisper --backend cuda --model $W/q8.bin --audio $W/jfk.wav --beam 5"
one="WhisperSegment=1073741824"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1; cat cb/SOURCE
  for v in new one; do
    tune=; [ $v = one ] && tune=$one
    echo "== $v (HARK_CUDA_TUNE=$tune): profile -r 1, then -r 5"
    HARK_CUDA_TUNE=$tune HARK_CUDA_STARTUP=1 HARK_CUDA_PROFILE=1 timeout 40 ./hark-new $B -r 1 2>&1
    HARK_CUDA_TUNE=$tune timeout 40 ./hark-new $B -r 5 2>&1
    if [ -e $W/excerpt.wav ]; then
      t=$( { time HARK_CUDA_TUNE=$tune ./hark-new transcribe --backend cuda --model $W/q8.bin --beam 1 $W/excerpt.wav > ex-$v.txt 2> ex-$v.err; } 2>&1 ); echo "RESULT $v excerpt greedy ${t}s words=$(wc -w < ex-$v.txt)"
    fi
  done
  echo "== excerpt transcripts identical: $(cmp -s ex-new.txt ex-one.txt && echo yes || echo NO)"
} > $OUT/bench.log 2>&1
grep -v "^samples" $OUT/bench.log | grep -i "RESULT\|greedy\|whisper_\|argmax\|identical\|== \|profile:"
export HARK_TESTDATA=$T/shared HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1
run() { echo "== $1: $2 msltest.test -test.run '$3'"; env $2 timeout 60 ./msltest.test -test.run "$3" -test.v -test.count=1 2>&1; echo "== exit $?"; }
k='WhisperFilterKernel|WhisperTrackKernel|ArgmaxKernel|WhisperBeamsKernel'
run normal "HARK_CUDA_PERMUTE=" "^Test($k|E2EWhisperJFK)\$" > $OUT/normal.log &
run permuted "HARK_CUDA_PERMUTE=20261124" "^Test($k)\$" > $OUT/permuted.log &
run poison "HARK_CUDA_POISON=1" "^Test($k)\$" > $OUT/poison.log &
wait
for f in normal permuted poison; do grep -h "^== \|^--- \|^ok\|^FAIL\|e2e_test" $OUT/$f.log | head -20; done
