#!/bin/bash
# Issue #34 round 11 (branch fold34), call A on the H200: decode attention with the output product folded in by heads
# (Tuning.AttnFoldO, rope_attention_mat_vec) against the two launches (HARK_CUDA_TUNE=AttnFoldO=1), in one binary.
# SmolLM2-shape tg128 q8_0/q4_0/f16 both ways (two pairs for q8_0), launches a token and the profile with graphs off
# both ways, q8_0 tg64 at depth 2048 (past 1024 keys: the ticket split and rope_attention_mat_vec_o either way).
# Success: `launches a token` 122.0 with the fold (152.0 with AttnFoldO=1); tg128 not below the AttnFoldO=1 rows.
# Run from the repository root with $K holding hark.xz and data.tar.xz (the SmolLM2 tokenizer, stories260K).
set -u
K=${K:-.gpu/fold34}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared && cd /w
xz -dc $K/hark.xz > hark && chmod +x hark
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $OUT/gpu.log 2>&1
TOK=/w/shared/llm-kit/tokenizers/smollm2
./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > $OUT/write.log 2>&1
M=/w/m/smollm2-135m-shape-v1-L30
OFF=HARK_CUDA_TUNE=AttnFoldO=1
{ for f in q8_0 q4_0 f16; do for e in "$OFF" ""; do echo "== tg128 $f ${e:-fold} at $(el) s"
    env $e ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 0 --tg 128 2>&1 | grep -vE '^  '; done; done
  for e in "$OFF" ""; do echo "== tg128 q8_0 second pair ${e:-fold} at $(el) s"
    env $e ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 5 --pp 0 --tg 128 2>&1 | grep -vE '^  '; done
  for e in "$OFF" ""; do echo "== launches a token and profile, graphs off (q8_0), ${e:-fold} at $(el) s"
    env $e HARK_CUDA_GRAPHS=0 HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1; done
  for e in "$OFF" ""; do echo "== q8_0 tg64 at depth 2048 ${e:-fold} at $(el) s"
    env $e ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 3 --pp 0 --tg 64 --depth 2048 --ctx 4096 2>&1 | grep -vE '^  '; done
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
cat $OUT/gpu.log; grep -vE '^(samples|load average)|^  ' $OUT/timed.log
