#!/bin/bash
# Issue #34, branch b1x34, call 1: main (3d3a2c5) as it is on the Llama-3.2-1B shape. From the repository root:
# K=.gpu/b1x34 bash $K/call1.sh, $K holding hark.xz (main's, cubins embedded) and smollm2.tar.xz (the tokenizer).
set -u
K=${K:-.gpu/b1x34}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/tok && cd $W
xz -dc $K/hark.xz > hark && chmod +x hark
tar -C $W/tok -xJf $K/smollm2.tar.xz
TOK=$W/tok/smollm2
{ nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem --format=csv,noheader
  ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16
  ls -la $W/m; echo "write done at $(el) s"; } > $OUT/write.log 2>&1
B1=$W/m/llama-1b-shape-v1-L16
hb() { # label, env..., then bench args after --
  local l=$1; shift; local e=(); while [ "$1" != -- ]; do e+=("$1"); shift; done; shift
  [ $(el) -lt ${LIMIT:-200} ] || { echo "SKIP $l at $(el) s"; return; }
  echo "== $l at $(el) s"; env "${e[@]}" ./hark bench llm --backend cuda "$@" 2>&1 | grep -E '^\| llama|^samples|^cuda|^hark|copy|GB/s'
}
{ for r in 1 2; do for f in q8_0 q4_0; do
    hb "1B $f main, round $r" X=1 -- --model $B1-$f.gguf -r 3 --pp 0 --tg 128
  done; done
  hb "1B q8_0, 8-bit activations (MatVecQ8KQ8_0=2048)" HARK_CUDA_TUNE=MatVecQ8KQ8_0=2048 -- --model $B1-q8_0.gguf -r 3 --pp 0 --tg 128
  for g in MatVecQ8Rows=1,MatVecQ8SIMDGroups=4 MatVecQ8Rows=4,MatVecQ8SIMDGroups=8 MatVecQ8Rows=2,MatVecQ8SIMDGroups=8; do
    hb "1B q4_0, $g" HARK_CUDA_TUNE=$g -- --model $B1-q4_0.gguf -r 3 --pp 0 --tg 128
    hb "1B q8_0, 8-bit, $g" HARK_CUDA_TUNE=MatVecQ8KQ8_0=2048,$g -- --model $B1-q8_0.gguf -r 3 --pp 0 --tg 128
  done; } > $OUT/timed.log 2>&1
for e in q8_0:X=1 q4_0:X=1 q8_0:HARK_CUDA_TUNE=MatVecQ8KQ8_0=2048; do f=${e%%:*}; v=${e#*:}
  echo "== 1B $f profile (graphs off), $v at $(el) s"
  env $v HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $B1-$f.gguf -r 1 --pp 0 --tg 64 2>&1
done > $OUT/profile.log
echo "== end at $(el) s"; cat $OUT/write.log | tail -3; cat $OUT/timed.log; grep -E '^==|ms of kernels|mat_vec|attention|rms|silu|embed' $OUT/profile.log | head -80
