#!/bin/bash
# Lead's third call (2026-11-30, eleventh session, main 3e3b406: the index-order draw merged): the chat prompt's depth
# costs ~5% on the H200 because at 33+ keys decode attention switches from one warp a head (rope_attention_f16) to the
# split-in-one-threadgroup form (rope_attention_group_f16, CUDA's AttnChunk 32). The chained bench greedy (A) and at
# temperature 0.7, depth 35 (E), then streamed chat, with HARK_CUDA_TUNE=AttnChunk=32 (the default), 128 and 256.
# Run from the repository root with $K holding hark.xz, streamspeed.xz and data.tar.xz.
set -u
K=${K:-.gpu/draw}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/models && cd /w
for b in hark streamspeed; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
TOK=/w/shared/llm-kit/tokenizers/smollm2
./hark bench llm --backend cpu --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /dev/null 2>&1
F=/w/m/smollm2-135m-shape-v1-L30-q8_0.gguf
ln -sf $F /w/models/smollm2-shape-q8_0.gguf
B="bench llm --backend cuda --model $F --pp 0 --tg 128 --chain -r 4 --ctx 4096"
{ for c in 32 128 256; do
    export HARK_CUDA_TUNE=AttnChunk=$c
    echo "== AttnChunk=$c at $(el) s"
    timeout 30 ./hark $B 2>&1 | grep -E '^samples.*chained'
    timeout 30 ./hark $B --temp 0.7 --depth 35 2>&1 | grep -E '^samples.*chained'
    ./hark serve --models-dir /w/models --backend cuda --addr 127.0.0.1:18089 > $OUT/serve-$c.log 2>&1 &
    P=$!
    for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/18089) 2>/dev/null && break; sleep 0.2; done
    timeout 30 ./streamspeed -url http://127.0.0.1:18089 -model smollm2-shape-q8_0 -reps 6 -n 128
    kill $P; wait $P
  done; echo "== done at $(el) s"; } > $OUT/attnchunk.log 2>&1
cat $OUT/attnchunk.log
