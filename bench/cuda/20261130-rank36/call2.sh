#!/bin/bash
# Issue #36 (branch rank36), second call, on the machine call1.sh left warm (/w/r36: msltest.test, jfk, the first
# part of the kit model's xz; the driver's cache holding the branch's base PTX): the model joined, msltest's
# TestE2EWhisperJFK through CUDA (not -short: greedy and beam 5) in normal, permuted-block and NaN-poisoned runs
# side by side; then `hark bench whisper --backend cuda -r 5 --beam 5` at the default (32 steps a read-back until a
# sequence finishes, then 4), at 8 and at 1 (a read-back every step, as main's search waited every step), and jfk's
# beam-5 text on CUDA and the CPU. $K holds hark.xz (-tags hark_nocubin) and wq8.part2.
set -u
K=${K:-.gpu/rank36b}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
export HARK_CUDA_CUBIN_DIR=$PWD/cuda/cubin
mkdir -p $OUT && cd /w/r36 2>/dev/null && [ -s wq8.part1 ] && [ -x msltest.test ] || { echo "no /w/r36: not call1.sh's machine"; exit 3; }
export HARK_TESTDATA=/w/r36/shared
W8=/w/r36/shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin; JFK=/w/r36/shared/audio/jfk.wav
cat wq8.part1 $K/wq8.part2 | xz -dc > $W8 || exit 3
xz -dc $K/hark.xz > hark && chmod +x hark
echo "unpacked at $(el) s"
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
run() {
  E=$(modeenv $1)
  env $E HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.run '^TestE2EWhisperJFK$' -test.v -test.count=1 > $OUT/jfk-$1.v.log 2>&1
  echo "== msltest TestE2EWhisperJFK $1 ($E): exit $? at $(el) s"
  grep -E '^(--- |ok|FAIL|PASS|panic)|Error|expected|actual|beams [15]:' $OUT/jfk-$1.v.log | head -20
}
run normal > $OUT/n.txt & run permuted > $OUT/p.txt & run poison > $OUT/q.txt & wait
cat $OUT/n.txt $OUT/p.txt $OUT/q.txt; rm -f $OUT/n.txt $OUT/p.txt $OUT/q.txt
{ echo "== hark bench whisper --backend cuda -r 5 --beam 5 at $(el) s"
  ./hark bench whisper --backend cuda -r 5 --beam 5 --model $W8 --audio $JFK 2>&1
  for n in 8 1; do
    echo "== hark, --chain-tokens $n at $(el) s"
    ./hark bench whisper --backend cuda -r 5 --beam 5 --chain-tokens $n --model $W8 --audio $JFK 2>&1 | grep -E -A3 'beam 5 window'
  done
  ./hark transcribe --backend cuda --model $W8 --beam 5 $JFK > $OUT/jfk-cuda.txt 2>/dev/null
  ./hark transcribe --backend cpu --model $W8 --beam 5 $JFK > $OUT/jfk-cpu.txt 2>/dev/null
  cmp -s $OUT/jfk-cuda.txt $OUT/jfk-cpu.txt && echo "jfk beam 5: CUDA and CPU print the same text: $(cat $OUT/jfk-cuda.txt)" || diff $OUT/jfk-cpu.txt $OUT/jfk-cuda.txt
  echo "== done at $(el) s"; } > $OUT/call2-timed.log 2>&1
cat $OUT/call2-timed.log
(cd $OUT && tar -czf call2-test-logs.tgz *.v.log jfk-*.txt && rm -f *.v.log jfk-*.txt)
