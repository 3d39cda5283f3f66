#!/bin/bash
# Issue #34, branch b1x34, call 4 (commit 2339c48's hark, -tags hark_nocubin): the final defaults' tg128 and per-kernel
# profile on the 1B shape, beside main's q8_0 kernels in the same binary (MatVecQ8KQ8_0=1000000). From the repository
# root: K=.gpu/b1x34f bash $K/call4.sh, $K holding hark.xz, cubin/ (as call 3's) and smollm2.tar.xz.
set -u
K=${K:-.gpu/b1x34f}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w4
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/tok && cd $W
xz -dc $K/hark.xz > hark && chmod +x hark && tar -C $W/tok -xJf $K/smollm2.tar.xz
export HARK_CUDA_CUBIN_DIR=$K/cubin
{ ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $W/tok/smollm2 --pp 8 --tg 0 -r 1 -t 16
  echo "write done at $(el) s"; } > $OUT/write.log 2>&1
B1=$W/m/llama-1b-shape-v1-L16; TG=(-r 3 --pp 0 --tg 128)
{ for r in 1 2; do
    echo "== 1B q8_0 b1x34 default, round $r at $(el) s"; ./hark bench llm --backend cuda --model $B1-q8_0.gguf "${TG[@]}" 2>&1
    echo "== 1B q8_0 main's kernels (MatVecQ8KQ8_0=1000000), round $r at $(el) s"
    HARK_CUDA_TUNE=MatVecQ8KQ8_0=1000000 ./hark bench llm --backend cuda --model $B1-q8_0.gguf "${TG[@]}" 2>&1
    echo "== 1B q4_0 b1x34 default, round $r at $(el) s"; ./hark bench llm --backend cuda --model $B1-q4_0.gguf "${TG[@]}" 2>&1
  done; } | grep -E '^==|^\| llama|^samples|copy|preparing|rror' > $OUT/timed.log
for f in q8_0 q4_0; do
  echo "== 1B $f profile (graphs off), default at $(el) s"
  HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $B1-$f.gguf -r 1 --pp 0 --tg 64 2>&1 | grep -vE '^samples'
done > $OUT/profile.log
echo "== end at $(el) s"; tail -1 $OUT/write.log; grep -E '^==|tg128' $OUT/timed.log; grep -E '^==|ms of kernels|us/launch' $OUT/profile.log
