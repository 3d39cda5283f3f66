#!/bin/bash
# Issue #36 (branch halt36), call 2 of 2 (call 1's machine, within its 30-s idle release; the driver's cache holds
# the branch's JIT-compiled PTX): the kit model joined back from its q8split order, jfk; then
# (1) side by side: msltest's TestE2EWhisperJFK (greedy and beam 5) and cuda's TestGPUSharedByTwoModels (Whisper's
#     chained windows through the runtime) in normal, permuted-block and NaN-poisoned runs (the long-form file for
#     TestE2EWhisperLongForm did not fit a call's transfer);
# (2) alone on the GPU: `hark bench whisper --backend cuda -r 5 --beam 5` on jfk and on the excerpt's first window,
#     hark (the branch) and hark0 (main 8c2ba3d); the branch at --chain-tokens 16 and 128 on both;
# (3) the 204.2-s excerpt end to end, `transcribe --backend cuda --beam 1|5`, hark and hark0 alternating, 3 runs each.
# $K holds q8s.bin.xz (the kit's ggml-kit-tiny.en-q8_0.bin reordered by bench/cpu/q8split.py), q8split.py,
# data-b.tar.xz (jfk, the long-form file's texts).
set -u
K=${K:-.gpu/halt36b}; K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/h36
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT; cd $W 2>/dev/null && [ -x hark ] && [ -s excerpt.wav ] || { echo "no $W: not call 1's machine"; exit 3; }
W8=$W/shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin; JFK=$W/shared/audio/jfk.wav
tar -C shared -xJf $K/data-b.tar.xz
xz -dc $K/q8s.bin.xz > q8s.bin && python3 $K/q8split.py join q8s.bin $W8 && rm q8s.bin
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
{ sha256sum $W8; echo "unpacked at $(el) s; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"; } > $OUT/call2.log
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261201";; poison) echo "HARK_CUDA_POISON=1";; esac; }
summ() { grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|beams [15]:' $1 | grep -v -- '--- PASS' | cut -c1-300 | head -14; echo "passed: $(grep -c -- '--- PASS' $1), failed: $(grep -c -- '--- FAIL' $1), skipped: $(grep -c -- '--- SKIP' $1)"; }
ct() { E=$(modeenv $1); env $E timeout 150 ./cuda.test -test.run '^TestGPUSharedByTwoModels$' -test.v -test.count=1 > $OUT/cuda2-$1.v.log 2>&1; echo "== cuda.test $1 ($E): exit $? at $(el) s"; summ $OUT/cuda2-$1.v.log; }
mt() { E=$(modeenv $1); env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 150 ./msltest.test -test.run '^TestE2EWhisperJFK$' -test.v -test.count=1 > $OUT/msl2-$1.v.log 2>&1; echo "== msltest TestE2EWhisperJFK $1 ($E): exit $? at $(el) s"; summ $OUT/msl2-$1.v.log; }
for m in normal permuted poison; do ct $m > $OUT/c-$m.txt & mt $m > $OUT/m-$m.txt & done; wait
cat $OUT/c-*.txt $OUT/m-*.txt >> $OUT/call2.log; rm -f $OUT/c-*.txt $OUT/m-*.txt
{ echo "== bench at $(el) s"
  for h in hark hark0; do HARK_CUDA_STARTUP=1 ./$h transcribe --backend cuda --model $W8 --beam 1 $JFK 2>&1 | grep -i "ready"; done
  for a in $JFK excerpt.wav; do for h in hark hark0; do
    echo "== $h bench whisper --backend cuda -r 5 --beam 5 --audio $(basename $a) at $(el) s"
    ./$h bench whisper --backend cuda -r 5 --beam 5 --model $W8 --audio $a 2>&1 | grep -E "window|^\| model"
  done; done
  for a in $JFK excerpt.wav; do for n in 16 128; do
    echo "== hark --chain-tokens $n --audio $(basename $a) at $(el) s"
    ./hark bench whisper --backend cuda -r 5 --beam 5 --chain-tokens $n --model $W8 --audio $a 2>&1 | grep -E "window"
  done; done; } > $OUT/bench.log 2>&1
TIMEFORMAT=%R
{ echo "== excerpt at $(el) s"
  for r in 1 2 3; do for bm in 1 5; do for h in hark hark0; do
    t=$( { time ./$h transcribe --backend cuda --model $W8 --beam $bm excerpt.wav > $OUT/ex-$h-$bm.txt 2>ex.err; } 2>&1 ); echo "RESULT $h cuda beam=$bm run=$r ${t}s words=$(wc -w < $OUT/ex-$h-$bm.txt)"
  done; done; done
  for bm in 1 5; do cmp -s $OUT/ex-hark-$bm.txt $OUT/ex-hark0-$bm.txt && echo "beam $bm: hark and hark0 print the same text" || echo "beam $bm: the texts differ"; done
  echo "== done at $(el) s"; } > $OUT/excerpt.log 2>&1
(cd $OUT && tar -czf call2-test-logs.tgz *.v.log ex-*.txt && rm -f *.v.log ex-*.txt)
cat $OUT/call2.log $OUT/bench.log $OUT/excerpt.log
