#!/bin/bash
# Issue #34 round 10 (branch launch150), call A2 on the H200 (the first hark run JIT-compiles the new
# PTX), after call A's ticket merge measured slower than the merge launch and was rewritten (threadgroup weights, the
# partials loaded 8 chunks at a time): split decode attention merged by its last chunk (Tuning.AttnTicket, attention_ticket_* /
# rope_attention_ticket_*) against the split + merge launches, in one binary (HARK_CUDA_TUNE=AttnTicket=1 is the old
# form). The Whisper kit's decoder before/after (two pairs), its profile and kernels a token with graphs off;
# and q8_0 tg64 at depth 2048 (RopeAttention
# split past 1024 keys) before/after (two pairs), with profiles. Run from the repository root with $K holding
# hark.xz, wq8.xz and data.tar.xz (the tokenizer, stories260K, jfk).
set -u
K=${K:-.gpu/launch150}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in hark; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $OUT/gpu.log 2>&1
TOK=/w/shared/llm-kit/tokenizers/smollm2
./hark bench llm --backend cpu --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > $OUT/write.log 2>&1
M=/w/m/smollm2-135m-shape-v1-L30
T1=HARK_CUDA_TUNE=AttnTicket=1
{ for i in 1 2; do for e in "$T1" ""; do echo "== whisper ${e:-ticket} at $(el) s"
    env $e ./hark bench whisper --backend cuda -r 5 2>&1 | grep -vE '^  '; done; done
  for e in "$T1" ""; do echo "== whisper profile, graphs off, ${e:-ticket} at $(el) s"
    env $e HARK_CUDA_GRAPHS=0 HARK_CUDA_PROFILE=1 ./hark bench whisper --backend cuda -r 2 2>&1; done
  for i in 1 2; do for e in "$T1" ""; do echo "== q8_0 tg64 at depth 2048 ${e:-ticket} at $(el) s"
    env $e ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 3 --pp 0 --tg 64 --depth 2048 --ctx 4096 2>&1 | grep -vE '^  '; done; done
  for e in "$T1" ""; do echo "== q8_0 depth 2048 launches and profile, graphs off, ${e:-ticket} at $(el) s"
    env $e HARK_CUDA_GRAPHS=0 HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 64 --depth 2048 --ctx 4096 2>&1; done
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
cat $OUT/gpu.log; grep -vE '^(samples|load average)|^  ' $OUT/timed.log
