#!/bin/bash
# Issue #34 (branch mv34), second call: call1.sh's 1B runs all failed to load (rope_attention_mat_vec_o took the
# 8-bit instance's name, which it has no instance of; and HARK_CUDA_TUNE refuses MatVecQ8K=0). Same kernels (the PTX
# is unchanged), hark rebuilt with the launch rule fixed. The SmolLM2 file written first and timed once while the
# driver JITs the PTX and the 1B files are written on the CPU; then the 1B tg128 before/after alternating, two rounds,
# "before" = the same binary with HARK_CUDA_TUNE=MatVecQ8K=1000000 (every product on mat_vec_impl, as main b7807e0);
# then, as time allows, the 1B q8_0 profile and two geometries. $K holds hark.xz and data.tar.xz.
set -u
K=${K:-.gpu/mv34}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared && cd $W
xz -dc $K/hark.xz > hark && chmod +x hark
tar -C $W/shared -xJf $K/data.tar.xz
TOK=$W/shared/llm-kit/tokenizers/smollm2
./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > $OUT/write.log 2>&1
{ ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 12
  ls -la $W/m; echo "write done at $(el) s"; } >> $OUT/write.log 2>&1 &
WR=$!
B1=$W/m/llama-1b-shape-v1-L16; SM=$W/m/smollm2-135m-shape-v1-L30
hb() { # label, env..., then bench args after --
  local l=$1; shift; local e=(); while [ "$1" != -- ]; do e+=("$1"); shift; done; shift
  [ $(el) -lt ${LIMIT:-72} ] || { echo "SKIP $l at $(el) s"; return; }
  echo "== $l at $(el) s"; env "${e[@]}" ./hark bench llm --backend cuda "$@" 2>&1 | grep -E '^\| llama|^samples|^cuda|^hark'
}
{ nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem --format=csv,noheader
  LIMIT=100 hb "SmolLM2 q8_0 (JIT; k < 2048: the same kernels as main)" X=1 -- --model $SM-q8_0.gguf -r 3 --pp 0 --tg 128
  wait $WR; tail -1 $OUT/write.log
  for r in 1 2; do for f in q8_0 q4_0; do
    hb "1B $f before (MatVecQ8K=1000000), round $r" HARK_CUDA_TUNE=MatVecQ8K=1000000 -- --model $B1-$f.gguf -r 3 --pp 0 --tg 128
    hb "1B $f after, round $r" X=1 -- --model $B1-$f.gguf -r 3 --pp 0 --tg 128
  done; done
  for g in MatVecQ8Rows=1,MatVecQ8SIMDGroups=4 MatVecQ8Rows=4,MatVecQ8SIMDGroups=4; do
    hb "1B q8_0 after, $g" HARK_CUDA_TUNE=$g -- --model $B1-q8_0.gguf -r 3 --pp 0 --tg 128
  done; } > $OUT/timed.log 2>&1
if [ $(el) -lt 76 ]; then echo "== 1B q8_0 after, profile (graphs off) at $(el) s"
  HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $B1-q8_0.gguf -r 1 --pp 0 --tg 64 2>&1; fi > $OUT/profile.log
echo "== end at $(el) s"; cat $OUT/timed.log; grep -E '_q8x|mat_vec|attention' $OUT/profile.log | head -20
