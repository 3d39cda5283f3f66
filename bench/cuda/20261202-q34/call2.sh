#!/bin/bash
# Issue #34, branch q34, call 2: mat_vec_q8p with its rows fixed at compile time (2 a warp: MQ_P_ROWS) and the
# cuda family's MatVecQ8PreK at 4096 (call 1: the down product only was the fastest), against the in-kernel
# quantization (MatVecQ8PreK off: main's kernels and launches), the same binary (-tags hark_nocubin, PTX JIT-compiled),
# alternated, three rounds; the pre-pass for every product (2048); the long products' geometry on the fewer
# registers; profiles, Nsight Compute of layer 10's down product, msltest through CUDA in three modes. From the lead's
# checkout root: K=.gpu/q34/c2 bash $K/call2.sh, $K holding hark.xz, msltest.test.xz (q34), data.tar.xz.
set -u
R=$(pwd); K=${K:-.gpu/q34/c2}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/q34
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v && cd $W
for f in hark msltest.test; do xz -dc $K/$f.xz > $f && chmod +x $f; done
tar -C $W/shared -xJf $K/data.tar.xz
export CUDA_CACHE_MAXSIZE=4294967296
TOK=$W/shared/llm-kit/tokenizers/smollm2
{ nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem --format=csv,noheader
  ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
  ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
  ls -la $W/m; echo "write done at $(el) s"
  HARK_CUDA_STARTUP=1 ./hark bench llm --backend cuda --model $W/m/smollm2-135m-shape-v1-L30-q8_0.gguf -r 1 --pp 0 --tg 8 2>&1 | grep -E 'prepar|ready|rror|tg8'
  echo "JIT done at $(el) s"; } > $OUT/write.log 2>&1
B1=$W/m/llama-1b-shape-v1-L16; SM=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
hb() { # label env... -- bench args
  local l=$1; shift; local e=(); while [ "$1" != -- ]; do e+=("$1"); shift; done; shift
  [ $(el) -lt ${LIMIT:-330} ] || { echo "SKIP $l at $(el) s"; return; }
  echo "== $l at $(el) s"
  env "${e[@]}" ./hark bench llm --backend cuda "$@" 2>&1 | grep -E '^\| |^samples|^cuda|preparing|rror|us/launch|ms of kernels'
}
T=(-r 3 --pp 512 --tg 128)
OFF=HARK_CUDA_TUNE=MatVecQ8PreK=1073741824; ALL=HARK_CUDA_TUNE=MatVecQ8PreK=2048
{ for r in 1 2 3; do for f in q8_0 q4_0; do
    hb "1B $f in-kernel (main's kernels), round $r" $OFF -- --model $B1-$f.gguf "${T[@]}"
    hb "1B $f q34 (pre-pass from 4096: the down product), round $r" X=1 -- --model $B1-$f.gguf "${T[@]}"
    hb "1B $f pre-pass all, round $r" $ALL -- --model $B1-$f.gguf "${T[@]}"
  done
  hb "SmolLM2 q8_0 in-kernel, round $r" $OFF -- --model $SM "${T[@]}"
  hb "SmolLM2 q8_0 q34, round $r" X=1 -- --model $SM "${T[@]}"
  done
  for v in MatVecQ8GroupsLong=2 MatVecQ8SIMDGroupsLong=4,MatVecQ8GroupsLong=2 MatVecQ8SIMDGroupsLong=4,MatVecQ8GroupsLong=3 MatVecQ8SIMDGroupsLong=4,MatVecQ8GroupsLong=4; do
    for f in q8_0 q4_0; do hb "1B $f q34 $v" HARK_CUDA_TUNE=$v -- --model $B1-$f.gguf -r 3 --pp 0 --tg 128; done
  done; } > $OUT/timed.log 2>&1
{ for f in q8_0; do
    hb "1B $f in-kernel profile (graphs off)" HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 $OFF -- --model $B1-$f.gguf -r 1 --pp 0 --tg 64
    hb "1B $f q34 profile (graphs off)" HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 -- --model $B1-$f.gguf -r 1 --pp 0 --tg 64
  done; } > $OUT/profile.log 2>&1
MT='^Test(MatVecQ8Activations|MatVecQ8PreQuantizedSame|RopeAttentionMatVecQ8Activations|MatVecAllTypes|FusedMatVecAllTypes|RepackedWeights|Aligned16Loads|MatVecGELUOut|MatVecTuning|E2EStories)$'
{ for m in normal permuted poison; do
    case $m in normal) E="X=1";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
    env $E HARK_TESTDATA=$W/shared HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 \
      timeout 150 ./msltest.test -test.run "$MT" -test.v -test.count=1 > v/msl-$m.v.log 2>&1
    echo "-- msltest $m ($E): exit $? at $(el) s, passed $(grep -c -- '--- PASS' v/msl-$m.v.log)"
    grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)|Error|JIT|compil' v/msl-$m.v.log | head -8
    grep -E 'k=4192.*capped=true pre=true|pre-pass vs' v/msl-$m.v.log | head -4
  done; } > $OUT/tests.log 2>&1
(cd v && tar -czf $OUT/test-logs.tgz *.v.log)
NCU="ncu --clock-control none --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats"
{ echo "== ncu q34 at $(el) s"
  env HARK_CUDA_GRAPHS=0 timeout 60 $NCU -k 'regex:quantize_q8x|mat_vec_q8_0_q8p' \
      -s 20 -c 2 ./hark bench llm --backend cuda --model $B1-q8_0.gguf -r 1 --pp 0 --tg 8 > ncu-on.log 2>&1; echo "exit $?"
  grep -E '  hark_|Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Elapsed Cycles|rror' ncu-on.log | cut -c1-130
  echo "== end at $(el) s"; } > $OUT/ncu.log 2>&1
tail -2 $OUT/write.log; cat $OUT/tests.log
awk '/^== /{l=substr($0,4)} /(tg128|pp512) \|/{split($0,a,"|"); print l ":" a[7] a[8] "(" a[9] ")"} /ms of kernels/{print l ": " $0}' $OUT/timed.log $OUT/profile.log | sed 's/, round/ r/; s/ at [0-9]* s//'
grep -E '== ncu|hark_|Duration|Registers|exit' $OUT/ncu.log | head -60
