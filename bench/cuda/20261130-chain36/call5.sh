#!/bin/bash
# Issue #36 (branch chain36), fifth call, on the machine call4.sh left warm (the kit model, the data and the excerpt
# in /w/c36, the driver's compute cache holding the branch's PTX): call2.sh's cuda package runs (normal,
# permuted-block, NaN-poisoned, side by side); then, alone on the GPU, `hark bench whisper --backend cuda -r 5` with
# 16 and with 32 tokens a read-back, the greedy window's GPU time per kernel (HARK_CUDA_PROFILE=1), the 204.2-s
# excerpt greedy end to end (three timed runs) and the CPU's text of it; then the same timings with hark0, main
# a2d18b3's hark (the branch's start: every greedy token a step, a select pass and two read-backs), whose first
# process JIT-compiles main's PTX. Run from the repository root with $K holding hark.xz, hark0.xz and cuda.test.xz.
set -u
K=${K:-.gpu/chain36}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT && cd /w/c36 2>/dev/null || { echo "no /w/c36: not call4.sh's machine"; exit 3; }
export HARK_TESTDATA=/w/c36/shared
W8=/w/c36/shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
[ -s $W8 ] && [ -s excerpt.flac ] || { echo "the kit model or the excerpt is missing"; exit 3; }
for b in hark hark0 cuda.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
echo "unpacked at $(el) s"
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
G='^TestGPU(Errors|StoriesReplay|SharedByTwoModels|BatchEqualsSequential)$'
for mode in normal permuted poison; do
  E=$(modeenv $mode)
  ( env $E timeout 150 ./cuda.test -test.run "$G" -test.v -test.count=1 > $OUT/cuda-$mode.v.log 2>&1
    echo "== cuda.test $mode ($E): exit $? at $(el) s" > $OUT/c-$mode.txt ) &
done
wait
for mode in normal permuted poison; do
  cat $OUT/c-$mode.txt; grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|host launches' $OUT/cuda-$mode.v.log | head -20
done
rm -f $OUT/c-*.txt
(cd $OUT && tar -czf call5-test-logs.tgz *.v.log && rm *.v.log)
{ echo "== hark bench whisper --backend cuda -r 5 at $(el) s"
  ./hark bench whisper --backend cuda -r 5 --model $W8 --audio shared/audio/jfk.wav 2>&1
  echo "== the same, 32 tokens a read-back at $(el) s"
  ./hark bench whisper --backend cuda -r 5 --chain-tokens 32 --model $W8 --audio shared/audio/jfk.wav 2>&1 | grep -E 'greedy|load'
  echo "== GPU time per kernel (HARK_CUDA_PROFILE=1, -r 2) at $(el) s"
  HARK_CUDA_PROFILE=1 ./hark bench whisper --backend cuda -r 2 --model $W8 --audio shared/audio/jfk.wav 2>&1 | grep -A16 'cuda greedy window'
  for r in 1 2 3; do
    /usr/bin/time -f "hark transcribe --backend cuda --beam 1 excerpt, run $r: %e s wall" ./hark transcribe --backend cuda --model $W8 --beam 1 excerpt.flac > $OUT/excerpt-cuda-$r.txt 2> $OUT/excerpt-err.txt
    tail -1 $OUT/excerpt-err.txt
  done
  /usr/bin/time -f "hark transcribe --backend cpu --beam 1 excerpt: %e s wall" ./hark transcribe --backend cpu --model $W8 --beam 1 excerpt.flac > $OUT/excerpt-cpu.txt 2> $OUT/excerpt-err.txt
  tail -1 $OUT/excerpt-err.txt
  cmp $OUT/excerpt-cuda-1.txt $OUT/excerpt-cuda-2.txt && cmp $OUT/excerpt-cuda-1.txt $OUT/excerpt-cuda-3.txt && echo "the three CUDA runs print the same text"
  cmp $OUT/excerpt-cuda-1.txt $OUT/excerpt-cpu.txt && echo "CUDA and CPU print the same text" || diff <(tr ' ' '\n' < $OUT/excerpt-cpu.txt) <(tr ' ' '\n' < $OUT/excerpt-cuda-1.txt) | head -20
  wc -w $OUT/excerpt-cuda-1.txt
  echo "== hark0 (main a2d18b3) bench whisper --backend cuda -r 5 at $(el) s"
  HARK_CUDA_STARTUP=1 ./hark0 bench whisper --backend cuda -r 5 --model $W8 --audio shared/audio/jfk.wav 2>&1
  for r in 1 2 3; do
    /usr/bin/time -f "hark0 transcribe --backend cuda --beam 1 excerpt, run $r: %e s wall" ./hark0 transcribe --backend cuda --model $W8 --beam 1 excerpt.flac > $OUT/excerpt-hark0-$r.txt 2> $OUT/excerpt-err.txt
    tail -1 $OUT/excerpt-err.txt
  done
  cmp $OUT/excerpt-cuda-1.txt $OUT/excerpt-hark0-1.txt && echo "hark and hark0 print the same text"
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
cat $OUT/timed.log
