#!/bin/bash
# Issue #33's CUDA serve target, branch attn (twelfth session), second call: main's decode RopeAttention kernels
# with (1) the in-threadgroup merge of rope_attention_group/attention_group taking each chunk's weight once
# (attn_combine_tg), (2) RopeAttention's softmax exp on the GPU's approximation (fast::exp), (3) a block's last
# keys' values loaded as one clamped batch. hark = the branch, hark0 = main 58d1e6d, in the same call. Runs:
# msltest's RopeAttention, attention, merge, other-tuning and stories260K tests through CUDA and cuda's
# TestGPUStoriesReplay, normal (hark0's JIT beside it), permuted-block and NaN-poisoned; the decode attention
# profile (HARK_CUDA_PROFILE=1) at 1-32, 37-44, 129-136 and 301-308 keys, both binaries; issue #33's comparison
# (A greedy chained, C temperature 0.7, E the same at depth 35, streamed chat), both; the branch's tg128 rows; last,
# Nsight Compute on the branch's attention launches at 129+ keys. Run from the repository root with $K holding
# hark.xz, hark0.xz, streamspeed.xz, cuda.test.xz, msltest.test.xz and data.tar.xz.
set -u
K=${K:-.gpu/attn}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/models /tmp/v && cd /w
for b in hark hark0 streamspeed cuda.test msltest.test; do (xz -dc $K/$b.xz > $b && chmod +x $b) & done; wait
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /tmp/v/write.log 2>&1 &
W=$!
timeout 90 ./hark0 bench llm --backend cuda --model /w/shared/models/stories260K.gguf --pp 0 --tg 1 -r 1 > /tmp/v/jit0.log 2>&1 &
J=$!
tests() { for mode in "$@"; do
    R='^Test(RopeAttentionKernel|E2EStories|AttentionMergeChunks)$'
    case $mode in normal) E=""; R='^Test(RopeAttentionKernel|AttentionKernel|AttentionMergeChunks|KernelsOtherTunings|E2EStories)$';; permuted) E="HARK_CUDA_PERMUTE=20261130";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== $mode ($E) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda timeout 120 ./msltest.test -test.short -test.run "$R" -test.v -test.count=1 > /tmp/v/msl-$mode.v.log 2>&1; echo "msltest exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|worst relative error [0-9.e-]*;|Error' /tmp/v/msl-$mode.v.log | grep -v 'PASS: TestAttentionMergeChunks/' | head -30
    env $E timeout 40 ./cuda.test -test.run '^Test(GPUStoriesReplay|AttentionNoLocalMemory)$' -test.v -test.count=1 > /tmp/v/cuda-$mode.v.log 2>&1; echo "cuda.test exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)' /tmp/v/cuda-$mode.v.log | head -12
  done; echo "== tests done at $(el) s"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; tests normal permuted poison; } > $OUT/tests.log 2>&1
wait $W $J
M=/w/m/smollm2-135m-shape-v1-L30
F=$M-q8_0.gguf
{ for d in 0:32 36:8 128:8 300:8; do for h in hark0 hark; do
    echo "== $h: depth ${d%:*}, tg ${d#*:} at $(el) s"
    HARK_CUDA_PROFILE=1 timeout 30 ./$h bench llm --backend cuda --model $F -r 1 --pp 0 --ctx 4096 --depth ${d%:*} --tg ${d#*:} 2>&1 | grep -E 'profile:|rope_attention|^\| llama'
  done; done; } > $OUT/profile.log 2>&1
B="bench llm --backend cuda --model $F --pp 0 --tg 128 --chain"
ln -sf $F /w/models/smollm2-shape-q8_0.gguf
{ for h in hark hark0; do
    echo "== [$h] A: $B -r 5 --ctx 4096 (greedy) at $(el) s"; timeout 30 ./$h $B -r 5 --ctx 4096 2>&1 | grep -E '^samples|chained'
    echo "== [$h] C: $B -r 5 --temp 0.7 --ctx 4096 at $(el) s"; timeout 30 ./$h $B -r 5 --temp 0.7 --ctx 4096 2>&1 | grep -E '^samples.*chained'
    echo "== [$h] E: $B -r 5 --temp 0.7 --ctx 4096 --depth 35 at $(el) s"; timeout 30 ./$h $B -r 5 --temp 0.7 --ctx 4096 --depth 35 2>&1 | grep -E '^samples.*chained'
    echo "== [$h] hark serve --backend cuda, streamed chat (bench/serve/streamspeed) at $(el) s"
    ./$h serve --models-dir /w/models --backend cuda --addr 127.0.0.1:18089 > /tmp/v/serve-$h.log 2>&1 &
    P=$!
    for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/18089) 2>/dev/null && break; sleep 0.2; done
    timeout 30 ./streamspeed -url http://127.0.0.1:18089 -model smollm2-shape-q8_0 -reps 6 -n 128
    kill $P; wait $P
  done; echo "== done at $(el) s"; } > $OUT/serve-cuda.log 2>&1
{ for r in hark:q8_0 hark:q4_0 hark:f16; do h=${r%:*}; f=${r#*:}
    echo "== [$h] $f tg128 at $(el) s"; timeout 40 ./$h bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 512 --tg 128 --chain 2>&1 | grep -E '^\| llama|^samples|^cuda tg128:'
  done; echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
{ for h in hark; do
    echo "== ncu $h depth 128, launches 61-62 at $(el) s"
    HARK_CUDA_GRAPHS=0 timeout 40 $NCU --clock-control none -k regex:rope_attention --launch-skip 60 -c 2 --section SpeedOfLight --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
      ./$h bench llm --backend cuda --model $F -r 1 --pp 0 --ctx 4096 --depth 128 --tg 2 > /tmp/v/ncu-$h.log 2>&1; echo "exit $?"
    grep -E '^  hark_|Duration|Elapsed Cycles|SM Active Cycles|Registers Per|Block Size|Warp Cycles Per Issued|Local Memory Spilling Requests  ' /tmp/v/ncu-$h.log | head -24
  done; } > $OUT/ncu.log 2>&1
tar -C /tmp/v -czf $OUT/logs.tgz .
cat $OUT/tests.log $OUT/profile.log $OUT/ncu.log $OUT/serve-cuda.log $OUT/timed.log | grep -vE '^(load average)'
