#!/bin/bash
# Issue #34, branch b1x34, call 3 (commit 4728a11's binaries): the changed kernels' tests on the GPU in normal,
# permuted-block and NaN-poisoned runs, and the final geometry (MatVecQ8Groups 2, MatVecQ8Fill, q8_0 on 8-bit
# activations) on the 1B shape against the same binary on main's q8_0 kernels (MatVecQ8KQ8_0=1000000: the float
# mat-vecs, unchanged since 3d3a2c5) and its neighbours. From the repository root: K=.gpu/b1x34t bash $K/call3.sh, $K
# holding hark.xz and msltest.test.xz (-tags hark_nocubin), cubin/ (call 2's ptxas -O3 sm_90 cubin of the same PTX,
# SOURCE, 3d3a2c5's sm80/sm90a cubins: the native modules are unchanged) and data.tar.xz (stories260K, its golden
# file, the SmolLM2 tokenizer).
set -u
K=${K:-.gpu/b1x34t}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w3
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/shared $W/m && cd $W
for f in msltest.test hark; do xz -dc $K/$f.xz > $f && chmod +x $f; done
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$K/cubin
{ ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $W/shared/llm-kit/tokenizers/smollm2 --pp 8 --tg 0 -r 1 -t 12
  ls -la $W/m; echo "write done at $(el) s"; } > $OUT/write.log 2>&1 &
WP=$!
T='^Test(MatVecQ8Activations|RopeAttentionMatVecQ8Activations|RopeAttentionMatVecKernel|MatVecAllTypes|FusedMatVecAllTypes|RepackedWeights|Aligned16Loads|MatVecGELUOut|E2EStories)$'
tests() { for mode in "$@"; do
  case $mode in normal) E="X=1";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
  echo "== msltest $mode ($E) at $(el) s"
  env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 150 ./msltest.test -test.run "$T" -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)' $OUT/msltest-$mode.v.log | grep -v -- '--- PASS' | head; echo "passed: $(grep -c -- '--- PASS' $OUT/msltest-$mode.v.log)"
  grep -E 'preparing' $OUT/msltest-$mode.v.log | head -2
done; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; tests normal; } > $OUT/tests.log 2>&1
wait $WP
B1=$W/m/llama-1b-shape-v1-L16
hb() { # label, env..., then bench args after --
  local l=$1; shift; local e=(); while [ "$1" != -- ]; do e+=("$1"); shift; done; shift
  [ $(el) -lt ${LIMIT:-200} ] || { echo "SKIP $l at $(el) s"; return; }
  echo "== $l at $(el) s"; env "${e[@]}" ./hark bench llm --backend cuda "$@" 2>&1 | grep -E '^\| llama|^samples|^cuda tg|preparing|rror'
}
TG=(-r 3 --pp 0 --tg 128)
MAIN=MatVecQ8KQ8_0=1000000
{ for r in 1 2; do
    hb "1B q8_0 b1x34 default, round $r" X=1 -- --model $B1-q8_0.gguf "${TG[@]}"
    hb "1B q8_0 main's kernels ($MAIN), round $r" HARK_CUDA_TUNE=$MAIN -- --model $B1-q8_0.gguf "${TG[@]}"
    hb "1B q4_0 b1x34 default, round $r" X=1 -- --model $B1-q4_0.gguf "${TG[@]}"
  done
  for v in MatVecQ8Fill=1 MatVecQ8Groups=1 MatVecQ8Groups=3 MatVecQ8Groups=4 MatVecQ8Rows=4 MatVecQ8Rows=4,MatVecQ8Groups=1 \
      MatVecQ8SIMDGroups=8,MatVecQ8Groups=1 MatVecQ8SIMDGroups=2,MatVecQ8Groups=4; do
    hb "1B q8_0, $v" HARK_CUDA_TUNE=$v -- --model $B1-q8_0.gguf "${TG[@]}"
    hb "1B q4_0, $v" HARK_CUDA_TUNE=$v -- --model $B1-q4_0.gguf "${TG[@]}"
  done
  hb "1B q8_0 b1x34 default, round 3" X=1 -- --model $B1-q8_0.gguf "${TG[@]}"
  hb "1B q4_0 b1x34 default, round 3" X=1 -- --model $B1-q4_0.gguf "${TG[@]}"
  hb "1B q8_0 main's kernels, round 3" HARK_CUDA_TUNE=$MAIN -- --model $B1-q8_0.gguf "${TG[@]}"; } > $OUT/timed.log 2>&1
for f in q8_0 q4_0; do
  echo "== 1B $f profile (graphs off), default at $(el) s"
  HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $B1-$f.gguf -r 1 --pp 0 --tg 64 2>&1 | grep -vE '^samples'
done > $OUT/profile.log
tests permuted poison >> $OUT/tests.log 2>&1
echo "== done at $(el) s" >> $OUT/tests.log
(cd $OUT && tar -czf test-logs.tgz *.v.log && rm *.v.log)
tail -2 $OUT/write.log; cat $OUT/tests.log
grep -E '^==|tg128' $OUT/timed.log | sed -E 's/\| llama 1.1B (Q8_0|Q4_0) \| [^|]*\|[^|]*\| CUDA \| [0-9]+ \| tg128 \|/   /'
grep -E '^==|ms of kernels|us/launch' $OUT/profile.log
