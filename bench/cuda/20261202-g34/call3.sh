#!/bin/bash
# Issue #34 round 16, branch g34, call 3: the branch's launch rule (no kernel change: main's PTX and committed cubins)
# with the cuda family's long-product geometry (MatVecQ8SIMDGroupsLong 8, MatVecQ8GroupsLong 1: products >= 4096
# wide, the 1B shape's down product) against main's geometry in the same binary (HARK_CUDA_TUNE=
# MatVecQ8SIMDGroupsLong=4,MatVecQ8GroupsLong=2: main's launches exactly), alternated, three rounds; a sweep of the
# other products' geometry on top; graphs-off profiles; Nsight Compute of the products; msltest through CUDA in
# three modes. From the lead's checkout root (main): K=.gpu/g34/c3 bash $K/call3.sh, $K holding hark.xz and
# msltest.test.xz (g34, -tags hark_nocubin: they read the checkout's cuda/cubin, made from the same PTX) and
# data.tar.xz (stories260K, its golden file, the SmolLM2 tokenizer).
set -u
R=$(pwd); K=${K:-.gpu/g34/c3}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/g34
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v && cd $W
for f in hark msltest.test; do xz -dc $K/$f.xz > $f && chmod +x $f; done
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
TOK=$W/shared/llm-kit/tokenizers/smollm2
{ nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem --format=csv,noheader
  ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16
  ls -la $W/m; echo "write done at $(el) s"; } > $OUT/write.log 2>&1
B1=$W/m/llama-1b-shape-v1-L16
hb() { # label env... -- bench args
  local l=$1; shift; local e=(); while [ "$1" != -- ]; do e+=("$1"); shift; done; shift
  [ $(el) -lt ${LIMIT:-300} ] || { echo "SKIP $l at $(el) s"; return; }
  echo "== $l at $(el) s"
  env "${e[@]}" ./hark bench llm --backend cuda "$@" 2>&1 | grep -E '^\| |^samples|^cuda|preparing|rror|us/launch|ms of kernels'
}
T=(-r 3 --pp 0 --tg 128)
MAIN=HARK_CUDA_TUNE=MatVecQ8SIMDGroupsLong=4,MatVecQ8GroupsLong=2
{ for r in 1 2 3; do for f in q8_0 q4_0; do
    hb "1B $f main's geometry, round $r" $MAIN -- --model $B1-$f.gguf "${T[@]}"
    hb "1B $f g34, round $r" X=1 -- --model $B1-$f.gguf "${T[@]}"
  done; done
  for v in MatVecQ8SIMDGroups=8,MatVecQ8Groups=1 MatVecQ8SIMDGroups=8,MatVecQ8Groups=1,MatVecQ8Rows=1 MatVecQ8SIMDGroups=6,MatVecQ8Groups=1 \
      MatVecQ8SIMDGroupsLong=6,MatVecQ8GroupsLong=1 MatVecQ8SIMDGroupsLong=8,MatVecQ8GroupsLong=2 MatVecQ8RowsLong=1,MatVecQ8GroupsLong=2 \
      MatVecQ8SIMDGroups=2,MatVecQ8Groups=4 MatVecQ8Rows=1,MatVecQ8Groups=4; do
    for f in q8_0 q4_0; do hb "1B $f g34 $v" HARK_CUDA_TUNE=$v -- --model $B1-$f.gguf "${T[@]}"; done
  done; } > $OUT/timed.log 2>&1
{ for f in q8_0 q4_0; do
    hb "1B $f main's geometry profile (graphs off)" HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 $MAIN -- --model $B1-$f.gguf -r 1 --pp 0 --tg 64
    hb "1B $f g34 profile (graphs off)" HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 -- --model $B1-$f.gguf -r 1 --pp 0 --tg 64
  done; } > $OUT/profile.log 2>&1
MT='^Test(MatVecQ8Activations|RopeAttentionMatVecQ8Activations|RopeAttentionMatVecKernel|MatVecAllTypes|FusedMatVecAllTypes|RepackedWeights|Aligned16Loads|MatVecGELUOut|MatVecTuning|E2EStories)$'
{ for m in normal permuted poison; do
    case $m in normal) E="X=1";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
    env $E HARK_TESTDATA=$W/shared HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 \
      timeout 120 ./msltest.test -test.run "$MT" -test.v -test.count=1 > v/msl-$m.v.log 2>&1
    echo "-- msltest $m ($E): exit $? at $(el) s, passed $(grep -c -- '--- PASS' v/msl-$m.v.log)"
    grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)|JIT|compil' v/msl-$m.v.log | head -5
    grep -E 'k=4192.*capped=true' v/msl-$m.v.log | head -2
  done; } > $OUT/tests.log 2>&1
(cd v && tar -czf $OUT/test-logs.tgz *.v.log)
NCU="ncu --clock-control none --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats"
{ for c in "main $MAIN" "g34 X=1"; do set -- $c
    echo "== ncu $c at $(el) s"
    env HARK_CUDA_GRAPHS=0 $2 timeout 60 $NCU -k 'regex:(silu_mul_mat_vec|rms_norm_mat_vec|rope_attention_mat_vec_o)_q8_0_q8x' \
      -s 40 -c 4 ./hark bench llm --backend cuda --model $B1-q8_0.gguf -r 1 --pp 0 --tg 8 > ncu-$1.log 2>&1
    echo "exit $?"
    grep -E '  hark_|Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|SM Active|Elapsed Cycles|rror' ncu-$1.log | cut -c1-130
  done; echo "== end at $(el) s"; } > $OUT/ncu.log 2>&1
tail -1 $OUT/write.log; cat $OUT/tests.log
awk '/^== /{l=substr($0,4)} /tg128 \|/{split($0,a,"|"); print l ":" a[8] "(" a[9] ")"} /ms of kernels/{print l ": " $0}' $OUT/timed.log $OUT/profile.log | sed 's/, round/ r/; s/ at [0-9]* s//'
grep -E '== ncu|hark_|Duration|exit' $OUT/ncu.log | head -40
