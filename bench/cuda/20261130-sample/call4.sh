#!/bin/bash
# Issue #33, round 2 (eleventh session, branch sample), second call on the H200: call3.sh again with the branch's
# next state (hark1: the landing bin's gather reads the bins as bytes, four to a word, four words a thread in
# flight; smp_walk computes each entry's mass once when a thread holds one entry): msltest's Sample and stories
# tests through CUDA (TestKernelsOtherTunings too in the normal run) and cuda's TestGPUStoriesReplay, each normal,
# permuted-block and NaN-poisoned; the kernel profile (HARK_CUDA_PROFILE=1) of main b242914's hark (hark0) and
# hark1, hark1's also with two other mass-pass geometries (HARK_CUDA_TUNE); Nsight Compute on two of hark1's
# sample kernels (ncu --set full, SASS source counters); then issue #33's comparison with hark1 as
# bench/cuda/20261130-s10-check/callB.sh's serve block (A greedy, C temperature 0.7, E the same at the chat
# prompt's depth 35, streamed chat through hark serve, 6 reps). Run from the repository root with $K holding
# hark0.xz, hark1.xz, streamspeed.xz, cuda.test.xz, msltest.test.xz and data.tar.xz.
set -u
K=${K:-.gpu/sample}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/models && cd /w
for b in hark0 hark1 streamspeed cuda.test msltest.test; do (xz -dc $K/$b.xz > $b && chmod +x $b) & done; wait
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
./hark1 bench llm --backend cpu --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /tmp/write.log 2>&1 &
W=$!
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; ./hark1 --version
  for mode in normal permuted poison; do
    R='^(TestSample|TestE2EStories$)'
    case $mode in normal) E=""; R='^(TestSample|TestE2EStories$|TestKernelsOtherTunings$)';; permuted) E="HARK_CUDA_PERMUTE=20261130";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== $mode ($E) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda timeout 120 ./msltest.test -test.run "$R" -test.skip TestSampleExpFixedPoint -test.v -test.count=1 > $OUT/msl-$mode.v.log 2>&1; echo "msltest exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|draws' $OUT/msl-$mode.v.log | head -24
    env $E timeout 60 ./cuda.test -test.run '^TestGPUStoriesReplay$' -test.v -test.count=1 > $OUT/cuda-$mode.v.log 2>&1; echo "cuda.test exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)' $OUT/cuda-$mode.v.log | head -12
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
(cd $OUT && tar -czf test-logs.tgz msl-*.v.log cuda-*.v.log && rm msl-*.v.log cuda-*.v.log)
wait $W
F=/w/m/smollm2-135m-shape-v1-L30-q8_0.gguf
P1="bench llm --backend cuda --model $F -r 1 --pp 0 --tg 128 --chain --temp 0.7 --ctx 4096"
{ for v in hark0: hark1: hark1:SampleSegment=1024 hark1:SampleSegment=512 hark0: hark1:; do
    h=${v%%:*}; T=${v#*:}
    echo "== $h ${T:+HARK_CUDA_TUNE=$T }sampled decode profile at $(el) s"
    env ${T:+HARK_CUDA_TUNE=$T} HARK_CUDA_PROFILE=1 ./$h $P1 2>&1 | sed -n '/chained temp 0.7 profile/,$p' | grep -E 'profile|sample|argmax'
  done
  echo "== ncu hark1 at $(el) s"
  timeout 150 ncu --clock-control none -k regex:'hark_sample' --launch-skip 40 --launch-count 6 --set full \
    --import-source no -o $OUT/sample1 -f ./hark1 $P1 > /tmp/ncu-run.log 2>&1
  echo "ncu exit $?"; tail -2 /tmp/ncu-run.log
  ncu -i $OUT/sample1.ncu-rep --page details > $OUT/ncu-details.txt 2>&1
  grep -E '^  hark_sample|Duration|Registers Per|Executed Instructions  |Local Memory|spill' $OUT/ncu-details.txt | head -40
  ncu -i $OUT/sample1.ncu-rep --page source --csv --print-source sass -k regex:'hark_sample$' > $OUT/ncu-sass.csv 2>&1; echo "sass csv $? $(wc -l < $OUT/ncu-sass.csv)"
  xz -9 $OUT/ncu-sass.csv; xz -9 $OUT/ncu-details.txt; rm -f $OUT/sample1.ncu-rep
  echo "== profiles done at $(el) s"; } > $OUT/profile.log 2>&1
B="bench llm --backend cuda --model $F --pp 0 --tg 128 --chain"
{ echo "== A: hark1 $B -r 5 --ctx 4096 (greedy) at $(el) s"; ./hark1 $B -r 5 --ctx 4096 2>&1 | grep -vE '^  '
  echo "== C: hark1 $B -r 5 --temp 0.7 --ctx 4096 at $(el) s"; ./hark1 $B -r 5 --temp 0.7 --ctx 4096 2>&1 | grep -vE '^  |tg128 \|'
  echo "== E: hark1 $B -r 5 --temp 0.7 --ctx 4096 --depth 35 at $(el) s"; ./hark1 $B -r 5 --temp 0.7 --ctx 4096 --depth 35 2>&1 | grep -vE '^  |tg128 \|'
  ln -sf $F /w/models/smollm2-shape-q8_0.gguf
  echo "== hark1 serve --backend cuda, streamed chat (bench/serve/streamspeed) at $(el) s"
  ./hark1 serve --models-dir /w/models --backend cuda --addr 127.0.0.1:18089 > $OUT/serve.log 2>&1 &
  P=$!
  for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/18089) 2>/dev/null && break; sleep 0.2; done
  ./streamspeed -url http://127.0.0.1:18089 -model smollm2-shape-q8_0 -reps 6 -n 128
  kill $P; wait $P
  echo "== done at $(el) s"; } > $OUT/serve-cuda.log 2>&1
cat $OUT/tests.log $OUT/profile.log $OUT/serve-cuda.log | grep -vE '^(load average)|^\| (model|---)'
