#!/bin/bash
# GPU call 5 for issue 34 round 7 (bench/cuda/20261130-decode/): the cuda family's mat-vec geometry swept again on
# commit 4120cc9 (16-byte weight and activation loads change each chunk's instruction count), HARK_CUDA_TUNE on the
# SmolLM2 shape's q4_0 and f16 files (the two targets missed), tg128 --pp 0 -r 3. Run from the repository root with
# $K holding hark.xz and data.tar.xz: K=.gpu/decode5 bash .gpu/decode5/call5.sh
set -u
K=${K:-.gpu/decode5}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared && cd /w
xz -dc $K/hark.xz > hark && chmod +x hark
tar -C /w/shared -xJf $K/data.tar.xz
./hark bench llm --backend cpu --dir /w/m --type q4_0,f16 --tokenizer /w/shared/llm-kit/tokenizers/smollm2 --pp 8 --tg 0 -r 1 -t 16 > $OUT/write.log 2>&1
M=/w/m/smollm2-135m-shape-v1-L30
{ for tune in "" MatVecRows=1 MatVecRows=3 MatVecRows=4 MatVecSIMDGroups=2 MatVecSIMDGroups=8 "MatVecRows=4,MatVecSIMDGroups=2"; do
    for f in q4_0 f16; do
      echo "== $f HARK_CUDA_TUNE=$tune at $(el) s"
      env ${tune:+HARK_CUDA_TUNE=$tune} ./hark bench llm --backend cuda --model $M-$f.gguf -r 3 --pp 0 --tg 128 2>&1 | grep -E '^\| llama|^samples'
    done
  done; echo "== end at $(el) s"; } > $OUT/tune.log 2>&1
cat $OUT/tune.log
