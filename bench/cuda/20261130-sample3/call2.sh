#!/bin/bash
# Issue #33, branch sample3 (twelfth session), call 2: call1.sh's tree plus the stored masses (the last group's walk
# loads them) and the cuda family's 1024-token segments; leaner than call 1 (the device share): the normal test run
# once, the profile (hark0 once, hark twice), the permuted and poisoned runs, then the comparison, then Nsight
# Compute's durations of hark's two Sample kernels. hark is the branch, hark0 main
# 58d1e6d (the branch's start); both JIT their PTX on a fresh machine (~40 s each), so hark0's JIT runs beside the
# first test run. Then: msltest's Sample tests and TestE2EStories through CUDA (TestKernelsOtherTunings too in the
# normal run, whose "narrow" tuning draws with 492 groups of 32 threads) and cuda's TestGPUStoriesReplay; the
# sampled decode's kernel profile of hark0 and hark twice each; Nsight Compute's durations of the Sample kernels
# (hark0's three, hark's two); issue #33's comparison with hark (A greedy chained, C temperature 0.7, E the same at
# the chat prompt's depth 35, streamed chat); the permuted-block and NaN-poisoned test runs last. Run from the
# repository root with $K holding hark.xz, hark0.xz, streamspeed.xz, cuda.test.xz, msltest.test.xz and data.tar.xz.
set -u
K=${K:-.gpu/sample3}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/models /tmp/v && cd /w
for b in hark hark0 streamspeed cuda.test msltest.test; do (xz -dc $K/$b.xz > $b && chmod +x $b) & done; wait
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
./hark bench llm --backend cpu --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /tmp/write.log 2>&1 &
W=$!
# hark0's JIT, beside the first test run (its result is cached for the profile below)
timeout 90 ./hark0 bench llm --backend cuda --model /w/shared/models/stories260K.gguf --pp 0 --tg 1 -r 1 > $OUT/jit0.log 2>&1 &
J=$!
tests() { for mode in "$@"; do
    R='^(TestSample|TestE2EStories$)'; C=1
    case $mode in normal) E=""; R='^(TestSample|TestE2EStories$|TestKernelsOtherTunings$)';; permuted) E="HARK_CUDA_PERMUTE=20261130";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== $mode ($E) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda timeout 120 ./msltest.test -test.run "$R" -test.skip TestSampleExpFixedPoint -test.v -test.count=$C > /tmp/v/msl-$mode.v.log 2>&1; echo "msltest exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|draws' /tmp/v/msl-$mode.v.log | head -40
    env $E timeout 40 ./cuda.test -test.run '^TestGPUStoriesReplay$' -test.v -test.count=1 > /tmp/v/cuda-$mode.v.log 2>&1; echo "cuda.test exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)' /tmp/v/cuda-$mode.v.log | head -12
  done; echo "== tests done at $(el) s"; tar -C /tmp/v -czf $OUT/test-logs.tgz .; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; tests normal; } > $OUT/tests.log 2>&1
wait $W $J
F=/w/m/smollm2-135m-shape-v1-L30-q8_0.gguf
P1="bench llm --backend cuda --model $F -r 1 --pp 0 --tg 128 --chain --temp 0.7 --ctx 4096"
{ for h in hark0 hark hark; do
    echo "== $h sampled decode profile at $(el) s"
    HARK_CUDA_PROFILE=1 timeout 30 ./$h $P1 2>&1 | sed -n '/chained temp 0.7 profile/,$p' | grep -E 'profile|sample|argmax'
  done; } > $OUT/profile.log 2>&1
tests permuted poison >> $OUT/tests.log 2>&1
B="bench llm --backend cuda --model $F --pp 0 --tg 128 --chain"
{ echo "== A: hark $B -r 5 --ctx 4096 (greedy) at $(el) s"; timeout 30 ./hark $B -r 5 --ctx 4096 2>&1 | grep -vE '^  '
  echo "== C: hark $B -r 5 --temp 0.7 --ctx 4096 at $(el) s"; timeout 30 ./hark $B -r 5 --temp 0.7 --ctx 4096 2>&1 | grep -vE '^  |tg128 \|'
  echo "== E: hark $B -r 5 --temp 0.7 --ctx 4096 --depth 35 at $(el) s"; timeout 30 ./hark $B -r 5 --temp 0.7 --ctx 4096 --depth 35 2>&1 | grep -vE '^  |tg128 \|'
  ln -sf $F /w/models/smollm2-shape-q8_0.gguf
  echo "== hark serve --backend cuda, streamed chat (bench/serve/streamspeed) at $(el) s"
  ./hark serve --models-dir /w/models --backend cuda --addr 127.0.0.1:18089 > $OUT/serve.log 2>&1 &
  P=$!
  for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/18089) 2>/dev/null && break; sleep 0.2; done
  timeout 30 ./streamspeed -url http://127.0.0.1:18089 -model smollm2-shape-q8_0 -reps 6 -n 128
  kill $P; wait $P
  echo "== done at $(el) s"; } > $OUT/serve-cuda.log 2>&1
{
  for h in hark; do
    echo "== $h: ncu gpu__time_duration of the Sample kernels (12 launches after 60) at $(el) s"
    HARK_CUDA_PROFILE=1 timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:'hark_sample' \
      --launch-skip 60 --launch-count 12 ./$h bench llm --backend cuda --model $F -r 1 --pp 0 --tg 32 --chain \
      --temp 0.7 --ctx 4096 > $OUT/ncu-$h.log 2>&1; echo "ncu exit $?"
    grep -E '^ +hark_sample|gpu__time_duration' $OUT/ncu-$h.log | sed -E 's/ +/ /g; s/, Context.*//'
  done; } > $OUT/ncu.log 2>&1
cat $OUT/tests.log $OUT/profile.log $OUT/serve-cuda.log $OUT/ncu.log | grep -vE '^(load average)|^\| (model|---)'
