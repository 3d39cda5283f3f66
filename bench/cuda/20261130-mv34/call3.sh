#!/bin/bash
# Issue #34 (branch mv34): the measurement calls 1 and 2 did not make (NOT RUN: the helper's device time ran out).
# For the lead's next call, from the repository root: K=.gpu/X bash bench/cuda/20261130-mv34/call3.sh, $K holding
# hark.xz (the merged tree's) and data.tar.xz (llm-kit/tokenizers/smollm2). "Before" is the same binary with
# HARK_CUDA_TUNE=MatVecQ8K=1000000 (every product on mat_vec_impl, as main b7807e0), so no second hark or second JIT.
# Order by priority, and the files written before the first GPU run: in call 2 the JIT beside a 12-thread write
# took 86 s (45 s alone) and left no time for the 1B runs.
set -u
K=${K:-.gpu/mv34}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared && cd $W
xz -dc $K/hark.xz > hark && chmod +x hark
tar -C $W/shared -xJf $K/data.tar.xz
TOK=$W/shared/llm-kit/tokenizers/smollm2
{ ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16
  ./hark bench llm --backend cpu --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16
  ls -la $W/m; echo "write done at $(el) s"; } > $OUT/write.log 2>&1
B1=$W/m/llama-1b-shape-v1-L16; SM=$W/m/smollm2-135m-shape-v1-L30
hb() { # label, env..., then bench args after --
  local l=$1; shift; local e=(); while [ "$1" != -- ]; do e+=("$1"); shift; done; shift
  [ $(el) -lt ${LIMIT:-400} ] || { echo "SKIP $l at $(el) s"; return; }
  echo "== $l at $(el) s"; env "${e[@]}" ./hark bench llm --backend cuda "$@" 2>&1 | grep -E '^\| llama|^samples|^cuda|^hark'
}
{ nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  hb "SmolLM2 q8_0 (the JIT)" X=1 -- --model $SM-q8_0.gguf -r 1 --pp 0 --tg 16
  for r in 1 2; do for f in q8_0 q4_0; do
    hb "1B $f before (MatVecQ8K=1000000), round $r" HARK_CUDA_TUNE=MatVecQ8K=1000000 -- --model $B1-$f.gguf -r 3 --pp 0 --tg 128
    hb "1B $f after, round $r" X=1 -- --model $B1-$f.gguf -r 3 --pp 0 --tg 128
  done; done
  for f in q8_0 q4_0; do
    hb "SmolLM2 $f before (MatVecQ8K=1000000)" HARK_CUDA_TUNE=MatVecQ8K=1000000 -- --model $SM-$f.gguf -r 3 --pp 0 --tg 128
    hb "SmolLM2 $f after (k < 2048: the same kernels)" X=1 -- --model $SM-$f.gguf -r 3 --pp 0 --tg 128
    hb "SmolLM2 $f, the 8-bit path from k=512" HARK_CUDA_TUNE=MatVecQ8K=512 -- --model $SM-$f.gguf -r 3 --pp 0 --tg 128
  done
  for g in MatVecQ8Rows=1,MatVecQ8SIMDGroups=4 MatVecQ8Rows=2,MatVecQ8SIMDGroups=8 MatVecQ8Rows=4,MatVecQ8SIMDGroups=4 MatVecQ8Rows=4,MatVecQ8SIMDGroups=8 MatVecQ8Rows=1,MatVecQ8SIMDGroups=8; do
    hb "1B q8_0 after, $g" HARK_CUDA_TUNE=$g -- --model $B1-q8_0.gguf -r 3 --pp 0 --tg 128
  done; } > $OUT/timed.log 2>&1
for f in q8_0 q4_0; do for e in MatVecQ8K=1000000 MatVecQ8K=2048; do
  echo "== 1B $f profile (graphs off), $e at $(el) s"
  HARK_CUDA_TUNE=$e HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $B1-$f.gguf -r 1 --pp 0 --tg 64 2>&1
done; done > $OUT/profile.log
echo "== end at $(el) s"; cat $OUT/timed.log; grep -E '^==|mat_vec|attention' $OUT/profile.log | head -60
