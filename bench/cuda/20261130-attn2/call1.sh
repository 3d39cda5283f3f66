#!/bin/bash
# Issue #33's CUDA serve target, decode attention round 2 (branch attn2, twelfth session), one call: RopeAttention's
# prologue takes the GPU's sin/cos approximations (no double precision), its values load 16 keys a batch (a 32-key
# block in two round trips, not four) and its K dot loads aligned rows 16 bytes at a time ("_a16" instances;
# HARK_CUDA_TUNE=Align16=1 withdraws the promise, the same binary without them). Runs: msltest's RopeAttention, attention, merge and stories260K tests
# through CUDA (other tunings in the normal run) and cuda's TestGPUStoriesReplay and TestAttentionNoLocalMemory,
# normal, permuted-block and NaN-poisoned; the event profile of the decode attention at depth 0 and 35 (greedy and
# temperature 0.7, chained); issue #33's comparison (A greedy chained, C temperature 0.7, E the same at depth 35,
# streamed chat); E and its profile again with HARK_CUDA_TUNE=AttnChunk=64 (item 3: the one-warp form up to 64
# keys); the tg128 rows. Run from the repository root with $K holding hark.xz, streamspeed.xz, cuda.test.xz,
# msltest.test.xz and data.tar.xz.
set -u
K=${K:-.gpu/attn2}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/models /tmp/v && cd /w
for b in hark streamspeed cuda.test msltest.test; do (xz -dc $K/$b.xz > $b && chmod +x $b) & done; wait
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /tmp/v/write.log 2>&1 &
W=$!
tests() { for mode in "$@"; do
    R='^Test(RopeAttentionKernel|AttentionKernel|AttentionMergeChunks|E2EStories)$'
    case $mode in normal) E=""; R='^Test(RopeAttentionKernel|AttentionKernel|AttentionMergeChunks|KernelsOtherTunings|E2EStories)$';; permuted) E="HARK_CUDA_PERMUTE=20261130";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== $mode ($E) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda timeout 120 ./msltest.test -test.short -test.run "$R" -test.v -test.count=1 > /tmp/v/msl-$mode.v.log 2>&1; echo "msltest exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|worst relative error [0-9.e-]*;|Error' /tmp/v/msl-$mode.v.log | grep -v 'PASS: TestAttentionMergeChunks/' | head -30
    env $E timeout 60 ./cuda.test -test.run '^Test(GPUStoriesReplay|AttentionNoLocalMemory)$' -test.v -test.count=1 > /tmp/v/cuda-$mode.v.log 2>&1; echo "cuda.test exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)' /tmp/v/cuda-$mode.v.log | head -12
  done; echo "== tests done at $(el) s"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; tests normal permuted poison; } > $OUT/tests.log 2>&1
wait $W
M=/w/m/smollm2-135m-shape-v1-L30
F=$M-q8_0.gguf
{ for d in 0 35; do for tu in "" Align16=1; do echo "== q8_0 chained sampled profile, ctx 4096, depth $d, HARK_CUDA_TUNE=$tu at $(el) s"
    HARK_CUDA_TUNE=$tu HARK_CUDA_PROFILE=1 timeout 30 ./hark bench llm --backend cuda --model $F -r 1 --pp 0 --tg 128 --chain --temp 0.7 --ctx 4096 --depth $d 2>&1 | grep -E 'profile:|rope_attention|sample'; done; done
  echo "== the same at depth 35 with HARK_CUDA_TUNE=AttnChunk=64 at $(el) s"
  HARK_CUDA_TUNE=AttnChunk=64 HARK_CUDA_PROFILE=1 timeout 30 ./hark bench llm --backend cuda --model $F -r 1 --pp 0 --tg 128 --chain --temp 0.7 --ctx 4096 --depth 35 2>&1 | grep -E 'profile:|rope_attention|sample'
  echo "== done at $(el) s"; } > $OUT/profile.log 2>&1
B="./hark bench llm --backend cuda --model $F --pp 0 --tg 128 --chain"
ln -sf $F /w/models/smollm2-shape-q8_0.gguf
{ echo "== A: $B -r 5 --ctx 4096 (greedy) at $(el) s"; timeout 30 $B -r 5 --ctx 4096 2>&1 | grep -E '^samples|chained'
  echo "== C: $B -r 5 --temp 0.7 --ctx 4096 at $(el) s"; timeout 30 $B -r 5 --temp 0.7 --ctx 4096 2>&1 | grep -E '^samples.*chained'
  echo "== E: $B -r 5 --temp 0.7 --ctx 4096 --depth 35 at $(el) s"; timeout 30 $B -r 5 --temp 0.7 --ctx 4096 --depth 35 2>&1 | grep -E '^samples.*chained'
  echo "== E with HARK_CUDA_TUNE=Align16=1 at $(el) s"; HARK_CUDA_TUNE=Align16=1 timeout 30 $B -r 5 --temp 0.7 --ctx 4096 --depth 35 2>&1 | grep -E '^samples.*chained'
  echo "== E with HARK_CUDA_TUNE=AttnChunk=64 at $(el) s"; HARK_CUDA_TUNE=AttnChunk=64 timeout 30 $B -r 5 --temp 0.7 --ctx 4096 --depth 35 2>&1 | grep -E '^samples.*chained'
  echo "== hark serve --backend cuda, streamed chat (bench/serve/streamspeed) at $(el) s"
  ./hark serve --models-dir /w/models --backend cuda --addr 127.0.0.1:18089 > /tmp/v/serve.log 2>&1 &
  P=$!
  for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/18089) 2>/dev/null && break; sleep 0.2; done
  timeout 30 ./streamspeed -url http://127.0.0.1:18089 -model smollm2-shape-q8_0 -reps 6 -n 128
  kill $P; wait $P
  echo "== done at $(el) s"; } > $OUT/serve-cuda.log 2>&1
{ for f in q8_0 q4_0 f16; do
    echo "== $f tg128 at $(el) s"; timeout 40 ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 512 --tg 128 --chain 2>&1 | grep -E '^\| llama|^samples|^cuda tg128:'
  done; echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
tar -C /tmp/v -czf $OUT/logs.tgz .
cat $OUT/tests.log $OUT/profile.log $OUT/serve-cuda.log $OUT/timed.log
