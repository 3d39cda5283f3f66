#!/bin/bash
# Issue #34 (branch mv34): the 8-bit-activation decode mat-vecs (shaders/matvec_q8.metal) on the H200. One call:
# the 1B and SmolLM2-shaped files written on the CPU while the tests' first run JITs the PTX; the tests (normal);
# the 1B tg128 before/after alternating, two rounds, "before" = the same binary with HARK_CUDA_TUNE=MatVecQ8K=0 (every
# product on mat_vec_impl, as main b7807e0: the only kernel change is the new path); the tests permuted and poisoned;
# SmolLM2 before/after; the 1B profile; a geometry sweep. $K holds hark.xz, cuda.test.xz, msltest.test.xz, data.tar.xz.
set -u
K=${K:-.gpu/mv34}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared && cd $W
for b in hark cuda.test msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared
TOK=$W/shared/llm-kit/tokenizers/smollm2
{ ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8
  ./hark bench llm --backend cpu --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8
  ls -la $W/m; echo "write done at $(el) s"; } > $OUT/write.log 2>&1 &
WR=$!
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
tests() { # $1 mode
  E=$(modeenv $1); G='^TestGPU(StoriesReplay|BatchEqualsSequential)$'; [ $1 = normal ] && G='^TestGPU(Errors|StoriesReplay|BatchEqualsSequential)$'
  echo "== cuda.test $1 ($E) at $(el) s"
  env $E timeout 150 ./cuda.test -test.run "$G" -test.v -test.count=1 > $OUT/cuda-$1.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/cuda-$1.v.log | head -20
  CH='MatVecQ8Activations|FusedMatVecAllTypes|MatVecAllTypes|RepackedWeights|Aligned16Loads|E2EStories'
  echo "== msltest $1 ($E) at $(el) s"
  env $E HARK_MSLTEST_DEVICE=cuda timeout 120 ./msltest.test -test.short -test.run "^Test($CH)\$" -test.v -test.count=1 > $OUT/msltest-$1.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$1.v.log | grep -v -- '--- PASS' | head -30
  grep -c -- '--- PASS' $OUT/msltest-$1.v.log; echo "== $1 done at $(el) s"
}
tests normal > $OUT/tests.log 2>&1
wait $WR; tail -3 $OUT/write.log
B1=$W/m/llama-1b-shape-v1-L16; SM=$W/m/smollm2-135m-shape-v1-L30
hb() { # label, env..., then bench args after --
  local l=$1; shift; local e=(); while [ "$1" != -- ]; do e+=("$1"); shift; done; shift
  [ $(el) -lt ${LIMIT:-200} ] || { echo "SKIP $l at $(el) s"; return; }
  echo "== $l at $(el) s"; env "${e[@]}" ./hark bench llm --backend cuda "$@" 2>&1 | grep -E '^\| llama|^samples|^cuda'
}
{ nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem --format=csv,noheader
  for r in 1 2; do for f in q8_0 q4_0; do
    hb "1B $f before (MatVecQ8K=0), round $r" HARK_CUDA_TUNE=MatVecQ8K=0 -- --model $B1-$f.gguf -r 3 --pp 0 --tg 128
    hb "1B $f after, round $r" X=1 -- --model $B1-$f.gguf -r 3 --pp 0 --tg 128
  done; done; } > $OUT/timed.log 2>&1
{ tests permuted; tests poison; } >> $OUT/tests.log 2>&1
{ for f in q8_0 q4_0; do
    hb "SmolLM2 $f before (MatVecQ8K=0)" HARK_CUDA_TUNE=MatVecQ8K=0 -- --model $SM-$f.gguf -r 3 --pp 0 --tg 128
    hb "SmolLM2 $f after (k < 2048: the same kernels)" X=1 -- --model $SM-$f.gguf -r 3 --pp 0 --tg 128
    hb "SmolLM2 $f with the 8-bit path from k=512" HARK_CUDA_TUNE=MatVecQ8K=512 -- --model $SM-$f.gguf -r 3 --pp 0 --tg 128
  done
  for g in MatVecQ8Rows=1,MatVecQ8SIMDGroups=4 MatVecQ8Rows=2,MatVecQ8SIMDGroups=8 MatVecQ8Rows=4,MatVecQ8SIMDGroups=4 MatVecQ8Rows=1,MatVecQ8SIMDGroups=8; do
    hb "1B q8_0 after, $g" HARK_CUDA_TUNE=$g -- --model $B1-q8_0.gguf -r 3 --pp 0 --tg 128
  done; } >> $OUT/timed.log 2>&1
for f in q8_0 q4_0; do [ $(el) -lt ${PLIMIT:-230} ] || { echo "SKIP profile $f at $(el) s"; continue; }
  echo "== 1B $f after, profile (graphs off) at $(el) s"; HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $B1-$f.gguf -r 1 --pp 0 --tg 64 2>&1
done > $OUT/profile.log
(cd $OUT && tar -czf test-logs.tgz *.v.log && rm *.v.log)
echo "== end at $(el) s"; cat $OUT/tests.log $OUT/timed.log; grep -E 'mat_vec|attention|total|kernels' $OUT/profile.log | head -40
