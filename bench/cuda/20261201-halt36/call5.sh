#!/bin/bash
# Issue #36 (branch halt36), call 5 (call 4's machine, within its 30-s idle release): waits for call 4's background
# tests (and so the JIT), joins the kit model, runs msltest's TestE2EWhisperJFK (greedy and beam 5) and cuda's
# TestGPUSharedByTwoModels side by side in the three modes, then alone on the GPU `hark bench whisper --backend cuda
# -r 5 --beam 5` on jfk and on the excerpt's first window (hark, hark0), then the 204.2-s excerpt end to end, hark and
# hark0 alternating, greedy and beam 5, 3 runs each (a run starts only before LIMIT seconds: the device budget).
# $K holds q8s.bin.xz, q8split.py.
set -u
K=${K:-.gpu/halt36e}; K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/h36; LIMIT=${LIMIT:-500}
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT; cd $W 2>/dev/null && [ -x hark0 ] && [ -s excerpt.wav ] || { echo "no $W: not call 4's machine"; exit 3; }
W8=$W/shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin; JFK=$W/shared/audio/jfk.wav
xz -dc $K/q8s.bin.xz > q8s.bin && python3 $K/q8split.py join q8s.bin $W8 && rm q8s.bin
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
for i in $(seq 1 150); do [ -e logs/done ] && break; sleep 1; done
summ() { grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|beams [15]:|halt_gpu|replay_gpu_test.go:117' $1 | grep -v -- '--- PASS' | cut -c1-300 | head -14; echo "passed: $(grep -c -- '--- PASS' $1), failed: $(grep -c -- '--- FAIL' $1), skipped: $(grep -c -- '--- SKIP' $1)"; }
{ sha256sum $W8; echo "model joined, call 4's tests done ($(ls logs/done 2>&1)) at $(el) s"
  for m in normal permuted poison; do cat logs/c-$m.txt; summ logs/cuda4-$m.v.log; cat logs/m-$m.txt; summ logs/msl4-$m.v.log; done; } > $OUT/call5.log 2>&1
cp logs/*.v.log $OUT/
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261201";; poison) echo "HARK_CUDA_POISON=1";; esac; }
ct() { E=$(modeenv $1); env $E timeout 120 ./cuda.test -test.run '^TestGPUSharedByTwoModels$' -test.v -test.count=1 > $OUT/cuda5-$1.v.log 2>&1; echo "== cuda.test $1 ($E): exit $? at $(el) s"; summ $OUT/cuda5-$1.v.log; }
mt() { E=$(modeenv $1); env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 120 ./msltest.test -test.run '^TestE2EWhisperJFK$' -test.v -test.count=1 > $OUT/msl5-$1.v.log 2>&1; echo "== msltest TestE2EWhisperJFK $1 ($E): exit $? at $(el) s"; summ $OUT/msl5-$1.v.log; }
for m in normal permuted poison; do ct $m > $OUT/c-$m.txt & mt $m > $OUT/m-$m.txt & done; wait
cat $OUT/c-*.txt $OUT/m-*.txt >> $OUT/call5.log; rm -f $OUT/c-*.txt $OUT/m-*.txt
{ echo "== bench at $(el) s"
  for h in hark hark0; do HARK_CUDA_STARTUP=1 ./$h transcribe --backend cuda --model $W8 --beam 1 $JFK 2>&1 | grep -i "ready"; done
  for a in $JFK excerpt.wav; do for h in hark hark0; do
    echo "== $h bench whisper --backend cuda -r 5 --beam 5 --audio $(basename $a) at $(el) s"
    ./$h bench whisper --backend cuda -r 5 --beam 5 --model $W8 --audio $a 2>&1 | grep -E "window|^\| model"
  done; done; } > $OUT/bench.log 2>&1
TIMEFORMAT=%R
{ echo "== excerpt at $(el) s"
  for r in 1 2 3; do for bm in 1 5; do for h in hark hark0; do
    [ $(el) -lt $LIMIT ] || { echo "== run $r beam $bm $h skipped at $(el) s (LIMIT $LIMIT)"; continue; }
    t=$( { time ./$h transcribe --backend cuda --model $W8 --beam $bm excerpt.wav > $OUT/ex-$h-$bm.txt 2>ex.err; } 2>&1 ); echo "RESULT $h cuda beam=$bm run=$r ${t}s words=$(wc -w < $OUT/ex-$h-$bm.txt)"
  done; done; done
  for bm in 1 5; do cmp -s $OUT/ex-hark-$bm.txt $OUT/ex-hark0-$bm.txt && echo "beam $bm: hark and hark0 print the same text" || echo "beam $bm: the texts differ"; done
  echo "== done at $(el) s"; } > $OUT/excerpt.log 2>&1
(cd $OUT && tar -czf call5-test-logs.tgz *.v.log ex-*.txt && rm -f *.v.log ex-*.txt)
cat $OUT/call5.log $OUT/bench.log $OUT/excerpt.log
