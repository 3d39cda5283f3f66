#!/bin/bash
# GPU call 5 for issue 34 round 6: the committed kernels (call 4's hark) under the cuda family's knobs and
# variations of them (HARK_CUDA_TUNE), SmolLM2-shape tg128, to see whether the geometry the round-2 sweep left
# alone (within 2% then) matters now that the kernels wait less on their loads.
set -u
K=${K:-.gpu/r6t}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared && cd /w
xz -dc $K/hark.xz > hark && chmod +x hark
tar -C /w/shared -xJf $K/data.tar.xz
TOK=/w/shared/llm-kit/tokenizers/smollm2
./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > $OUT/write.log 2>&1
M=/w/m/smollm2-135m-shape-v1-L30
{ for v in "" MatVecRows=1 MatVecRows=4 MatVecSIMDGroups=2 MatVecSIMDGroups=8 AttnChunk=64 AttnGroupKeys=1 ""; do
    for f in q8_0 q4_0 f16; do
      echo "== $f HARK_CUDA_TUNE=$v at $(el) s"; HARK_CUDA_TUNE=$v ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 0 --tg 128 2>&1 | grep -E '^\| llama|^samples'
    done
  done; echo "== done at $(el) s"; } > $OUT/tune.log 2>&1
grep -E '^==|tg128 \|' $OUT/tune.log | paste - - | awk -F'|' '{print $1, $8, $9}'
