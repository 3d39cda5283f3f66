#!/bin/bash
# Issue #33, round 2 (eleventh session, branch sample), one call on the H200: the branch's Sample pass (three
# launches: sample_pre folded into sample_scale, logprobs at the start of sample; 64-bit scans by shuffles; the
# landing bin's gather with 8 loads a thread in flight; the groups' histograms summed 4 groups at a time; the
# bitonic sort in registers with shuffles below distance 32). msltest's Sample and stories tests through CUDA
# (TestKernelsOtherTunings too in the normal run) and cuda's TestGPUStoriesReplay, each normal, permuted-block and
# NaN-poisoned; the kernel profile (HARK_CUDA_PROFILE=1) of main b242914's hark (hark0) and the branch's, the
# branch's also with two other mass-pass geometries (HARK_CUDA_TUNE); then issue #33's comparison as
# bench/cuda/20261130-s10-check/callB.sh's serve block (A greedy, C temperature 0.7, E the same at the chat prompt's
# depth 35, streamed chat through hark serve, 6 reps). Run from the repository root with $K holding hark.xz,
# hark0.xz, streamspeed.xz, cuda.test.xz, msltest.test.xz and data.tar.xz.
set -u
K=${K:-.gpu/sample}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/models && cd /w
for b in hark hark0 streamspeed cuda.test msltest.test; do (xz -dc $K/$b.xz > $b && chmod +x $b) & done; wait
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
./hark bench llm --backend cpu --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > $OUT/write.log 2>&1 &
W=$!
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; ./hark --version
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
{ for v in hark0: hark: hark:SampleSegment=1024 hark:SampleSegment=512 hark0: hark:; do
    h=${v%%:*}; T=${v#*:}
    echo "== $h ${T:+HARK_CUDA_TUNE=$T }sampled decode profile at $(el) s"
    env ${T:+HARK_CUDA_TUNE=$T} HARK_CUDA_PROFILE=1 ./$h $P1 2>&1 | sed -n '/chained temp 0.7 profile/,$p' | grep -E 'profile|sample|argmax'
  done; } > $OUT/profile.log 2>&1
B="bench llm --backend cuda --model $F --pp 0 --tg 128 --chain"
{ echo "== A: hark $B -r 5 --ctx 4096 (greedy) at $(el) s"; ./hark $B -r 5 --ctx 4096 2>&1 | grep -vE '^  '
  echo "== C: hark $B -r 5 --temp 0.7 --ctx 4096 at $(el) s"; ./hark $B -r 5 --temp 0.7 --ctx 4096 2>&1 | grep -vE '^  |tg128 \|'
  echo "== E: hark $B -r 5 --temp 0.7 --ctx 4096 --depth 35 at $(el) s"; ./hark $B -r 5 --temp 0.7 --ctx 4096 --depth 35 2>&1 | grep -vE '^  |tg128 \|'
  ln -sf $F /w/models/smollm2-shape-q8_0.gguf
  echo "== hark serve --backend cuda, streamed chat (bench/serve/streamspeed) at $(el) s"
  ./hark serve --models-dir /w/models --backend cuda --addr 127.0.0.1:18089 > $OUT/serve.log 2>&1 &
  P=$!
  for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/18089) 2>/dev/null && break; sleep 0.2; done
  ./streamspeed -url http://127.0.0.1:18089 -model smollm2-shape-q8_0 -reps 6 -n 128
  kill $P; wait $P
  echo "== done at $(el) s"; } > $OUT/serve-cuda.log 2>&1
cat $OUT/tests.log $OUT/profile.log $OUT/serve-cuda.log | grep -vE '^(load average)|^\| (model|---)'
