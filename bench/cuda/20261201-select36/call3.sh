#!/bin/bash
# select36 call 3 (NOT RUN: the helper's device budget was spent; for the lead): next-filter-history.patch
# (whisper_filter finds the last timestamp by a group reduction over strided positions instead of a walk back one
# load at a time) against the branch's head, A/B in one call. One binary (hark-next, the patch applied) runs its own
# module from next.cubin (a cubin dir: main's cubins with the base module's sm_90 cubin and SOURCE line replaced) or
# the head's through HARK_CUDA_PTX=head.cubin (cuModuleLoadData takes a cubin as well as PTX; the entries and function
# constants are the same; untried: if the head rows fail, only the next rows stand); head.cubin from the branch
# head's PTX (kernels-head.ptx.gz), next.cubin from the patched PTX (kernels-next.ptx.gz), both made by ptxas here in
# parallel (~45 s). Then msltest-next's filter, track
# and JFK tests on the GPU in three modes (its embedded PTX is next's: a cubin dir with its SOURCE line).
# Needs the kit model and audio staged in /w/s17 (q8.bin, jfk.wav, excerpt.wav: bench/cuda/20261201-s17/stage.sh).
# Run: carry .gpu/select36n; bash .gpu/select36n/call3.sh
set -u
R=$(pwd); K=$R/.gpu/select36n; OUT=${OUT:-/tmp/out}; W=/w/s17; mkdir -p $OUT
ls $W; [ -e $W/q8.bin ] && [ -e $W/jfk.wav ] || { echo "not staged"; exit 3; }
T=/tmp/s36n; rm -rf $T; mkdir -p $T/shared/whisper-kit/models $T/shared/audio && cd $T
for b in hark-next msltest-next.test; do (xz -dc $K/$b.xz > $b && chmod +x $b) & done
ln -s $W/q8.bin shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin; ln -s $W/jfk.wav shared/audio/jfk.wav; cp $K/jfk.txt shared/audio/
export PATH=$PATH:/usr/local/cuda/bin
s=$(date +%s%N)
for v in head next; do (gzip -dc $K/kernels-$v.ptx.gz > $v.ptx && ptxas -arch=sm_90 -O3 $v.ptx -o $v.cubin) & done
wait; echo "ptxas (two in parallel) $(( ($(date +%s%N) - s) / 1000000 )) ms"; ls -la *.cubin
cp -r $R/cuda/cubin cb && xz -0 -T4 -c next.cubin > cb/kernels.sm_90.cubin.xz &&
  sed -i "s/^kernels .*/kernels $(sha256sum $K/kernels-next.ptx.gz | cut -d' ' -f1)/" cb/SOURCE
export HARK_CUDA_CUBIN_DIR=$T/cb
TIMEFORMAT=%R
B="bench whisper --backend cuda --model $W/q8.bin --audio $W/jfk.wav --beam 5"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
  for v in head next head next; do
    p=; [ $v = head ] && p=$T/head.cubin
    echo "== $v (HARK_CUDA_PTX=$p): profile -r 1, then -r 5"
    HARK_CUDA_PTX=$p HARK_CUDA_PROFILE=1 timeout 40 ./hark-next $B -r 1 2>&1
    HARK_CUDA_PTX=$p timeout 40 ./hark-next $B -r 5 2>&1
    t=$( { time HARK_CUDA_PTX=$p ./hark-next transcribe --backend cuda --model $W/q8.bin --beam 1 $W/excerpt.wav > ex-$v.txt 2> ex-$v.err; } 2>&1 ); echo "RESULT $v excerpt greedy ${t}s words=$(wc -w < ex-$v.txt)"
  done
  echo "== excerpt transcripts identical: $(cmp -s ex-head.txt ex-next.txt && echo yes || echo NO)"
} > $OUT/bench3.log 2>&1
grep -v "^samples" $OUT/bench3.log | grep -i "RESULT\|greedy window\|whisper_\|argmax\|identical\|== \|ptxas"
grep "samples greedy\|samples beam" $OUT/bench3.log
export HARK_TESTDATA=$T/shared HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1
k='WhisperFilterKernel|WhisperTrackKernel'
# mode, its environment, its tests: in parallel, the JFK end-to-end test in the normal run only
while read -r mode env tests; do
  { echo "== $mode: $env msltest-next.test -test.run '$tests'"
    env $env timeout 60 ./msltest-next.test -test.run "$tests" -test.v -test.count=1 2>&1; echo "== exit $?"; } > $OUT/${mode}3.log &
done <<MODES
normal HARK_CUDA_PERMUTE= ^Test($k|E2EWhisperJFK)\$
permuted HARK_CUDA_PERMUTE=20261124 ^Test($k)\$
poison HARK_CUDA_POISON=1 ^Test($k)\$
MODES
wait
for f in normal3 permuted3 poison3; do grep -h "^== \|^--- \|^ok\|^FAIL\|e2e_test" $OUT/$f.log | head -20; done
