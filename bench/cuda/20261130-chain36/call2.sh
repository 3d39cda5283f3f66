#!/bin/bash
# Issue #36 (branch chain36), second call, on the machine call1.sh left warm (its kit model in /w/c36, the driver's
# compute cache holding this PTX): the cuda package's GPU tests (StoriesReplay's chains and graphs, the batch engine,
# two models sharing the GPU: Whisper's chained jfk window among them) in normal, permuted and poisoned runs side by
# side; then, alone on the GPU, `hark bench whisper --backend cuda -r 5` (encoder, unchained decoder step, and the
# chained greedy window: ms and host synchronizations a token) and the 204.2-s excerpt greedy end to end, three
# timed runs, then the CPU backend's text of it for comparison. Run from the repository root with $K holding
# hark.xz, cuda.test.xz, excerpt.flac and data.tar.xz.
set -u
K=${K:-.gpu/chain36}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/c36/shared && cd /w/c36
for b in hark cuda.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C shared -xJf $K/data.tar.xz
cp $K/excerpt.flac .
export HARK_TESTDATA=/w/c36/shared
W8=/w/c36/shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
[ -s $W8 ] || { echo "the kit model is missing: the machine was not call1.sh's"; exit 3; }
G='^TestGPU(Errors|StoriesReplay|SharedByTwoModels|BatchEqualsSequential)$'
run() { # mode env
  env $2 timeout 150 ./cuda.test -test.run "$G" -test.v -test.count=1 > $OUT/cuda-$1.v.log 2>&1
  echo "== cuda.test $1 ($2): exit $? at $(el) s"
}
run normal "" > $OUT/c-normal.txt &
run permuted HARK_CUDA_PERMUTE=20261130 > $OUT/c-permuted.txt &
run poison HARK_CUDA_POISON=1 > $OUT/c-poison.txt &
wait
for mode in normal permuted poison; do
  cat $OUT/c-$mode.txt
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|host launches' $OUT/cuda-$mode.v.log | head -20
done
rm -f $OUT/c-*.txt
(cd $OUT && tar -czf call2-test-logs.tgz *.v.log && rm *.v.log)
{ echo "== hark bench whisper --backend cuda -r 5 at $(el) s"
  ./hark bench whisper --backend cuda -r 5 --model $W8 --audio shared/audio/jfk.wav 2>&1
  for r in 1 2 3; do
    /usr/bin/time -f "hark transcribe --backend cuda --beam 1 excerpt, run $r: %e s wall" ./hark transcribe --backend cuda --model $W8 --beam 1 excerpt.flac > $OUT/excerpt-cuda-$r.txt 2> $OUT/excerpt-err.txt
    tail -1 $OUT/excerpt-err.txt
  done
  /usr/bin/time -f "hark transcribe --backend cpu --beam 1 excerpt: %e s wall" ./hark transcribe --backend cpu --model $W8 --beam 1 excerpt.flac > $OUT/excerpt-cpu.txt 2> $OUT/excerpt-err.txt
  tail -1 $OUT/excerpt-err.txt
  cmp $OUT/excerpt-cuda-1.txt $OUT/excerpt-cuda-2.txt && cmp $OUT/excerpt-cuda-1.txt $OUT/excerpt-cuda-3.txt && echo "the three CUDA runs print the same text"
  cmp $OUT/excerpt-cuda-1.txt $OUT/excerpt-cpu.txt && echo "CUDA and CPU print the same text" || diff <(tr ' ' '\n' < $OUT/excerpt-cpu.txt) <(tr ' ' '\n' < $OUT/excerpt-cuda-1.txt) | head -20
  wc -w $OUT/excerpt-cuda-1.txt
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
cat $OUT/timed.log
