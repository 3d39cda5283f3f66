#!/bin/bash
# Issue #33's CUDA serve target, branch attn (twelfth session): decode RopeAttention with the query heads of a KV
# head in one threadgroup (rope_attention_gqa_f16, Tuning.AttnGQA). One call on the H200; every before/after pair
# is the same binary in the same call, "perhead" = HARK_CUDA_TUNE=AttnGQA=1 (main's kernels: rope_attention_f16 up
# to 32 keys, rope_attention_group_f16 above). Runs: msltest's RopeAttention, attention, other-tuning and
# stories260K tests through CUDA and cuda's TestGPUStoriesReplay (normal first: it pays the PTX JIT); the decode
# attention profile (HARK_CUDA_PROFILE=1) at 1-32, 37-44, 129-136 and 301-308 keys and Nsight Compute on the
# attention launches, both forms; issue #33's comparison (A greedy chained, C temperature 0.7, E the same at the
# chat prompt's depth 35, streamed chat through hark serve) both forms; the tg128 rows of q8_0/q4_0/f16 both forms;
# then the permuted-block and NaN-poisoned test runs. Run from the repository root with $K holding hark.xz,
# streamspeed.xz, cuda.test.xz, msltest.test.xz and data.tar.xz.
set -u
K=${K:-.gpu/attn}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/models /tmp/v && cd /w
for b in hark streamspeed cuda.test msltest.test; do (xz -dc $K/$b.xz > $b && chmod +x $b) & done; wait
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /tmp/v/write.log 2>&1 &
W=$!
tests() { for mode in "$@"; do
    R='^Test(RopeAttentionKernel|E2EStories)$'
    case $mode in normal) E=""; R='^Test(RopeAttentionKernel|AttentionKernel|KernelsOtherTunings|E2EStories)$';; permuted) E="HARK_CUDA_PERMUTE=20261130";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== $mode ($E) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda timeout 120 ./msltest.test -test.short -test.run "$R" -test.v -test.count=1 > /tmp/v/msl-$mode.v.log 2>&1; echo "msltest exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|worst|Error' /tmp/v/msl-$mode.v.log | head -30
    env $E timeout 40 ./cuda.test -test.run '^Test(GPUStoriesReplay|AttentionNoLocalMemory)$' -test.v -test.count=1 > /tmp/v/cuda-$mode.v.log 2>&1; echo "cuda.test exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)' /tmp/v/cuda-$mode.v.log | head -12
  done; echo "== tests done at $(el) s"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; ./hark --version; tests normal; } > $OUT/tests.log 2>&1
wait $W
M=/w/m/smollm2-135m-shape-v1-L30
F=$M-q8_0.gguf
V() { case $1 in gqa) echo "";; perhead) echo "HARK_CUDA_TUNE=AttnGQA=1";; esac; }
# decode attention's profile by depth, both forms (graphs off, events around each launch)
{ for d in 0:32 36:8 128:8 300:8; do for v in gqa perhead; do
    echo "== $v: depth ${d%:*}, tg ${d#*:} at $(el) s"
    env $(V $v) HARK_CUDA_PROFILE=1 timeout 30 ./hark bench llm --backend cuda --model $F -r 1 --pp 0 --ctx 4096 --depth ${d%:*} --tg ${d#*:} 2>&1 | grep -E 'profile:|rope_attention|^\| llama'
  done; done; } > $OUT/profile.log 2>&1
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
{ for r in perhead:20 perhead:40 gqa:20 gqa:40 gqa:300; do v=${r%:*}; d=${r#*:}
    echo "== ncu $v depth $d at $(el) s"
    env $(V $v) HARK_CUDA_GRAPHS=0 timeout 60 $NCU --clock-control none -k regex:rope_attention -c 3 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
      ./hark bench llm --backend cuda --model $F -r 1 --pp 0 --ctx 4096 --depth $d --tg 2 > /tmp/v/ncu-$v-$d.log 2>&1; echo "exit $?"
    grep -E '^  hark_|Duration|Registers Per|Achieved Occupancy|Block Size|Grid Size|Warp Cycles Per Issued|Issued Warp|Memory Throughput|No Eligible|Stall|Local' /tmp/v/ncu-$v-$d.log | head -60
  done; } > $OUT/ncu.log 2>&1
B="./hark bench llm --backend cuda --model $F --pp 0 --tg 128 --chain"
ln -sf $F /w/models/smollm2-shape-q8_0.gguf
{ for v in gqa perhead gqa; do [ $v = perhead ] && export HARK_CUDA_TUNE=AttnGQA=1
    echo "== [$v] A: $B -r 5 --ctx 4096 (greedy) at $(el) s"; timeout 30 $B -r 5 --ctx 4096 2>&1 | grep -E '^samples|chained'
    echo "== [$v] C: $B -r 5 --temp 0.7 --ctx 4096 at $(el) s"; timeout 30 $B -r 5 --temp 0.7 --ctx 4096 2>&1 | grep -E '^samples.*chained'
    echo "== [$v] E: $B -r 5 --temp 0.7 --ctx 4096 --depth 35 at $(el) s"; timeout 30 $B -r 5 --temp 0.7 --ctx 4096 --depth 35 2>&1 | grep -E '^samples.*chained'
    echo "== [$v] hark serve --backend cuda, streamed chat (bench/serve/streamspeed) at $(el) s"
    ./hark serve --models-dir /w/models --backend cuda --addr 127.0.0.1:18089 > /tmp/v/serve-$v.log 2>&1 &
    P=$!
    for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/18089) 2>/dev/null && break; sleep 0.2; done
    timeout 30 ./streamspeed -url http://127.0.0.1:18089 -model smollm2-shape-q8_0 -reps 6 -n 128
    kill $P; wait $P; unset HARK_CUDA_TUNE
  done; echo "== done at $(el) s"; } > $OUT/serve-cuda.log 2>&1
{ for f in q8_0 q4_0 f16; do for v in gqa perhead; do
    echo "== [$v] $f tg128 at $(el) s"; env $(V $v) timeout 40 ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 512 --tg 128 --chain 2>&1 | grep -E '^\| llama|^samples|^cuda tg128:'
  done; done; echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
tests permuted poison >> $OUT/tests.log 2>&1
tar -C /tmp/v -czf $OUT/logs.tgz .
cat $OUT/tests.log $OUT/profile.log $OUT/ncu.log $OUT/serve-cuda.log $OUT/timed.log | grep -vE '^(load average)'
