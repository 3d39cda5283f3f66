#!/bin/bash
# Issue #36 (branch halt36), call 4 (a new machine: calls 1-2's was given back; call 3, which would have reused it,
# never ran): the branch at its second commit (the prompt a lead batch of its own, plan.ChainIO.Lead; greedy 32
# tokens and beam 40 steps a look). Unpacks the binaries (hark, cuda.test, msltest.test of the branch; hark0 of main
# 8c2ba3d), stories260K, jfk, the trim tool and the excerpt, then starts in the background (setsid: they run on
# after this call returns, while call5.sh's model travels) the tests that need no Whisper model, normal,
# permuted-block and NaN-poisoned runs side by side (their first loads JIT-compile the branch's PTX, which the
# driver's cache keeps for call5.sh): cuda's TestGPUChainHalt and TestGPUStoriesReplay, msltest's TestE2EStories.
# $K holds bins3.tar.xz, data-a.tar.xz, data-b.tar.xz, trim.xz, excerpt.flac.
set -u
K=${K:-.gpu/halt36d}; K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/h36
mkdir -p $OUT $W/shared/whisper-kit/models $W/logs && cd $W
tar -xJf $K/bins3.tar.xz && tar -C shared -xJf $K/data-a.tar.xz && tar -C shared -xJf $K/data-b.tar.xz
xz -dc $K/trim.xz > trim && chmod +x trim && ./trim $K/excerpt.flac excerpt.wav 204.2
sha256sum hark hark0 cuda.test msltest.test excerpt.wav > $OUT/call4.log
cat > bg.sh <<'EOS'
cd /w/h36; S=$(date +%s); export HARK_TESTDATA=/w/h36/shared HARK_CUDA_CUBIN_DIR=$1
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261201";; poison) echo "HARK_CUDA_POISON=1";; esac; }
for m in normal permuted poison; do
  ( E=$(modeenv $m); env $E timeout 200 ./cuda.test -test.run '^TestGPU(ChainHalt|StoriesReplay)$' -test.v -test.count=1 > logs/cuda4-$m.v.log 2>&1; echo "== cuda.test $m ($E): exit $? at $(( $(date +%s) - S )) s" > logs/c-$m.txt ) &
  ( E=$(modeenv $m); env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 200 ./msltest.test -test.run '^TestE2EStories$' -test.v -test.count=1 > logs/msl4-$m.v.log 2>&1; echo "== msltest $m ($E): exit $? at $(( $(date +%s) - S )) s" > logs/m-$m.txt ) &
done; wait; touch logs/done
EOS
setsid nohup bash bg.sh $R/cuda/cubin > logs/bg.out 2>&1 < /dev/null &
echo "unpacked, background tests started at $(( $(date +%s) - S )) s; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" >> $OUT/call4.log
cat $OUT/call4.log
