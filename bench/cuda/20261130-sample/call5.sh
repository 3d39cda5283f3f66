#!/bin/bash
# Issue #33, round 2 (eleventh session, branch sample), third call on the H200, kept short (device time): the
# branch's sort rewrite (hark2: smp_sort exchanges 64-bit keys through threadgroup memory, SIMD-group barriers below
# distance 32, no shuffles). msltest's Sample and stories tests through CUDA (TestKernelsOtherTunings too in the
# normal run) and cuda's TestGPUStoriesReplay, each normal, permuted-block and NaN-poisoned; hark2's kernel profile
# (HARK_CUDA_PROFILE=1; twice, and last with the one-group launch at 512 and 256 threads and the mass pass at
# 1024 tokens a group, HARK_CUDA_TUNE; main's and hark1's are in logs4/profile.log: each binary's PTX costs ~40 s of JIT on a
# fresh machine); then issue #33's comparison with hark2 as call4.sh's, less the depth-35 row (E: the sampler does
# not change it; logs4 has it). Run from the repository root with $K
# holding hark2.xz, streamspeed.xz, cuda.test.xz, msltest.test.xz and data.tar.xz.
set -u
K=${K:-.gpu/sample}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/models /tmp/v && cd /w
for b in hark2 streamspeed cuda.test msltest.test; do (xz -dc $K/$b.xz > $b && chmod +x $b) & done; wait
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
./hark2 bench llm --backend cpu --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /tmp/write.log 2>&1 &
W=$!
tests() { for mode in "$@"; do
    R='^(TestSample|TestE2EStories$)'
    case $mode in normal) E=""; R='^(TestSample|TestE2EStories$|TestKernelsOtherTunings$)';; permuted) E="HARK_CUDA_PERMUTE=20261130";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== $mode ($E) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda timeout 120 ./msltest.test -test.run "$R" -test.skip TestSampleExpFixedPoint -test.v -test.count=1 > /tmp/v/msl-$mode.v.log 2>&1; echo "msltest exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|draws' /tmp/v/msl-$mode.v.log | head -24
    env $E timeout 60 ./cuda.test -test.run '^TestGPUStoriesReplay$' -test.v -test.count=1 > /tmp/v/cuda-$mode.v.log 2>&1; echo "cuda.test exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)' /tmp/v/cuda-$mode.v.log | head -12
  done; echo "== tests done at $(el) s"; tar -C /tmp/v -czf $OUT/test-logs.tgz .; }
# the normal run first (its first process JITs the PTX, ~40 s, while the model file is written), then the profile
# and the comparison, then the permuted and poisoned runs: the call runs under a short limit, so the most needed
# come first
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; tests normal; } > $OUT/tests.log 2>&1
wait $W
F=/w/m/smollm2-135m-shape-v1-L30-q8_0.gguf
P1="bench llm --backend cuda --model $F -r 1 --pp 0 --tg 128 --chain --temp 0.7 --ctx 4096"
prof() { for T in "$@"; do
    echo "== hark2 ${T:+HARK_CUDA_TUNE=$T }sampled decode profile at $(el) s"
    env ${T:+HARK_CUDA_TUNE=$T} HARK_CUDA_PROFILE=1 ./hark2 $P1 2>&1 | sed -n '/chained temp 0.7 profile/,$p' | grep -E 'profile|sample|argmax'
  done; }
prof "" "" > $OUT/profile.log 2>&1
B="bench llm --backend cuda --model $F --pp 0 --tg 128 --chain"
{ echo "== A: hark2 $B -r 5 --ctx 4096 (greedy) at $(el) s"; ./hark2 $B -r 5 --ctx 4096 2>&1 | grep -vE '^  '
  echo "== C: hark2 $B -r 5 --temp 0.7 --ctx 4096 at $(el) s"; ./hark2 $B -r 5 --temp 0.7 --ctx 4096 2>&1 | grep -vE '^  |tg128 \|'
  ln -sf $F /w/models/smollm2-shape-q8_0.gguf
  echo "== hark2 serve --backend cuda, streamed chat (bench/serve/streamspeed) at $(el) s"
  ./hark2 serve --models-dir /w/models --backend cuda --addr 127.0.0.1:18089 > $OUT/serve.log 2>&1 &
  P=$!
  for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/18089) 2>/dev/null && break; sleep 0.2; done
  ./streamspeed -url http://127.0.0.1:18089 -model smollm2-shape-q8_0 -reps 6 -n 128
  kill $P; wait $P
  echo "== done at $(el) s"; } > $OUT/serve-cuda.log 2>&1
tests permuted poison >> $OUT/tests.log 2>&1
prof SampleThreads=512 SampleThreads=256 SampleSegment=1024 >> $OUT/profile.log 2>&1
cat $OUT/tests.log $OUT/profile.log $OUT/serve-cuda.log | grep -vE '^(load average)|^\| (model|---)'
