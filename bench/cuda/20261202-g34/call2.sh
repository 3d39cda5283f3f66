#!/bin/bash
# Issue #34 round 16, branch g34, call 2: two bodies of the 8-bit-activation mat-vecs against main on the 1B shape,
# alternated, with the new long-product geometry knobs (MatVecQ8{Rows,SIMDGroups,Groups}Long, products >= 4096
# wide: the down product); their msltest runs through CUDA in three modes; their committed-form cubins (ptxas -O3,
# as bench/cuda/cubins.sh, for sm_75..sm_90) in the background. From the lead's checkout root (main):
# K=.gpu/g34/c2 bash $K/call2.sh, $K holding hark.xz and msltest.test.xz (g34 with body v3 embedded, -tags
# hark_nocubin), ptxpdl.xz, ptx.id, v2.diff.xz (body v2's PTX as a normal diff from v3's: ndiff.py), v2.sha,
# data.tar.xz. Bodies: v3 = main's single-buffered body, the row sums reduced over R components only (float2 for
# R = 2, not float4) and a lane's first blocks' activation quants kept in registers; v2 = call 1's double-buffered
# body with the same reduction. Main's side: the same binary reading main's committed sm_90 cubin ($W/mainc, the
# SOURCE hash trick of call1.sh); v2's: its cubin in a folder whose SOURCE names v3's hash (same entries).
set -u
R=$(pwd); K=${K:-.gpu/g34/c2}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/g34
export PATH=$PATH:/usr/local/cuda/bin
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v3 $W/v2 $W/mainc $W/v $W/c3 $W/c2 && cd $W
for f in hark msltest.test ptxpdl; do xz -dc $K/$f.xz > $f && chmod +x $f; done
python3 $R/bench/cuda/20261201-b1x34/ptxfrom.py hark $W/kernels.ptx.gz $(cat $K/ptx.id) || exit 1
gzip -dc kernels.ptx.gz > v3.ptx; xz -dc $K/v2.diff.xz > v2.diff
python3 $R/bench/cuda/20261202-g34/ndiff.py v3.ptx v2.diff v2.ptx 2>/dev/null || python3 $K/ndiff.py v3.ptx v2.diff v2.ptx
[ "$(sha256sum v2.ptx | cut -d' ' -f1)" = "$(cat $K/v2.sha)" ] || { echo "v2.ptx: wrong hash"; exit 1; }
tar -C $W/shared -xJf $K/data.tar.xz
H=$(sha256sum kernels.ptx.gz | cut -d' ' -f1)
for d in v3 v2 mainc; do cp $R/cuda/cubin/sm80.sm_90.cubin.xz $R/cuda/cubin/sm90a.sm_90a.cubin.xz $d/
  { echo "kernels $H pdl"; grep -v '^kernels ' $R/cuda/cubin/SOURCE; } > $d/SOURCE; done
cp $R/cuda/cubin/kernels.sm_90.cubin.xz mainc/
for b in v3 v2; do
  ( ./ptxpdl < $b.ptx > $b.pdl.ptx
    /usr/bin/time -f "$b ptxas -O3 sm_90 --split-compile=0: %e s" ptxas -arch=sm_90 -O3 --split-compile=0 $b.pdl.ptx -o $b.cubin
    xz -T4 -2 -c $b.cubin > $b/kernels.sm_90.cubin.xz
    echo "$b:"; cuobjdump --dump-resource-usage $b.cubin 2>&1 | grep -A1 -E 'Function hark_(silu_mul_mat_vec|rms_norm_mat_vec|rope_attention_mat_vec_o)_q8_0_q8x_rp\b' | grep -v '^--' ) > $OUT/ptxas-$b.log 2>&1 &
done
# the committed form (bench/cuda/cubins.sh's ptxas -O3, no split-compile; PDL form for sm_90), both bodies
( for b in v3 v2; do for a in sm_75 sm_80 sm_86 sm_89 sm_90; do
    src=$b.ptx; [ $a = sm_90 ] && src=$b.pdl.ptx
    ( while [ ! -s $b.pdl.ptx ]; do sleep 1; done; sleep 2
      /usr/bin/time -f "c$b kernels $a: %e s" ptxas -arch=$a -O3 $src -o c$b.$a.cubin && xz -9e -T1 -c c$b.$a.cubin > c${b#v}/kernels.$a.cubin.xz
      echo "c$b.$a: $(stat -c %s c$b.$a.cubin) bytes, xz $(stat -c %s c${b#v}/kernels.$a.cubin.xz)" ) &
  done; done; wait; ptxas --version | tail -1; echo "committed-form cubins done at $(el) s" ) > $W/cubins.log 2>&1 &
CB=$!
TOK=$W/shared/llm-kit/tokenizers/smollm2
{ nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem --format=csv,noheader
  ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 12
  ls -la $W/m; echo "write done at $(el) s"; } > $OUT/write.log 2>&1
while [ ! -s v3/kernels.sm_90.cubin.xz ] || [ ! -s v2/kernels.sm_90.cubin.xz ]; do sleep 1; done; sleep 1
cat $OUT/ptxas-v3.log $OUT/ptxas-v2.log
B1=$W/m/llama-1b-shape-v1-L16
hb() { # cubin-folder label env... -- bench args
  local d=$W/$1 l=$2; shift 2; local e=(); while [ "$1" != -- ]; do e+=("$1"); shift; done; shift
  [ $(el) -lt ${LIMIT:-330} ] || { echo "SKIP $l at $(el) s"; return; }
  echo "== $l at $(el) s"
  env HARK_CUDA_CUBIN_DIR=$d "${e[@]}" ./hark bench llm --backend cuda "$@" 2>&1 | grep -E '^\| |^samples|^cuda|preparing|rror|us/launch|ms of kernels'
}
T=(-r 3 --pp 0 --tg 128)
L8=MatVecQ8SIMDGroupsLong=8,MatVecQ8GroupsLong=1
{ for r in 1 2; do for f in q8_0 q4_0; do
    hb mainc "1B $f main, round $r" X=1 -- --model $B1-$f.gguf "${T[@]}"
    hb v3 "1B $f v3, round $r" X=1 -- --model $B1-$f.gguf "${T[@]}"
    hb v2 "1B $f v2, round $r" X=1 -- --model $B1-$f.gguf "${T[@]}"
    hb v3 "1B $f v3 $L8, round $r" HARK_CUDA_TUNE=$L8 -- --model $B1-$f.gguf "${T[@]}"
    hb v2 "1B $f v2 $L8, round $r" HARK_CUDA_TUNE=$L8 -- --model $B1-$f.gguf "${T[@]}"
  done; done
  for v in MatVecQ8RowsLong=4 MatVecQ8RowsLong=4,MatVecQ8SIMDGroupsLong=8,MatVecQ8GroupsLong=1 MatVecQ8RowsLong=1,MatVecQ8SIMDGroupsLong=8,MatVecQ8GroupsLong=1 \
      MatVecQ8SIMDGroupsLong=2 MatVecQ8SIMDGroupsLong=8,MatVecQ8GroupsLong=2 MatVecQ8Groups=3; do
    for b in v3 v2; do for f in q8_0 q4_0; do
      hb $b "1B $f $b $v" HARK_CUDA_TUNE=$v -- --model $B1-$f.gguf "${T[@]}"
    done; done
  done; } > $OUT/timed.log 2>&1
{ for d in mainc v3 v2; do for f in q8_0 q4_0; do
    hb $d "1B $f $d profile (graphs off)" HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 -- --model $B1-$f.gguf -r 1 --pp 0 --tg 64
  done; done
  hb v3 "1B q8_0 v3 $L8 profile (graphs off)" HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 HARK_CUDA_TUNE=$L8 -- --model $B1-q8_0.gguf -r 1 --pp 0 --tg 64
  hb v2 "1B q8_0 v2 $L8 profile (graphs off)" HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 HARK_CUDA_TUNE=$L8 -- --model $B1-q8_0.gguf -r 1 --pp 0 --tg 64
  } > $OUT/profile.log 2>&1
MT='^Test(MatVecQ8Activations|RopeAttentionMatVecQ8Activations|RopeAttentionMatVecKernel|MatVecAllTypes|FusedMatVecAllTypes|RepackedWeights|Aligned16Loads|MatVecGELUOut|MatVecTuning|E2EStories)$'
{ for b in v3 v2; do for m in normal permuted poison; do
    case $m in normal) E="X=1";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
    env $E HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$W/$b HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 \
      timeout 90 ./msltest.test -test.run "$MT" -test.v -test.count=1 > v/msl-$b-$m.v.log 2>&1
    echo "-- msltest $b $m ($E): exit $? at $(el) s, passed $(grep -c -- '--- PASS' v/msl-$b-$m.v.log)"
    grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)|JIT|compil' v/msl-$b-$m.v.log | head -5
  done; done; } > $OUT/tests.log 2>&1
(cd v && tar -czf $OUT/test-logs.tgz *.v.log)
NCU="ncu --clock-control none --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats"
{ for c in "v3 X=1" "v2 X=1" "v3 HARK_CUDA_TUNE=$L8"; do set -- $c
    [ $(el) -lt 440 ] || break
    echo "== ncu $c at $(el) s"
    env HARK_CUDA_CUBIN_DIR=$W/$1 HARK_CUDA_GRAPHS=0 $2 timeout 60 $NCU -k 'regex:(silu_mul_mat_vec|rms_norm_mat_vec|rope_attention_mat_vec_o)_q8_0_q8x' \
      -s 40 -c 4 ./hark bench llm --backend cuda --model $B1-q8_0.gguf -r 1 --pp 0 --tg 8 > ncu-$1-$2.log 2>&1
    echo "exit $?"
    grep -E '  hark_|Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|SM Active|rror' ncu-$1-$2.log | cut -c1-130
  done; echo "== end at $(el) s"; } > $OUT/ncu.log 2>&1
wait $CB; cat $W/cubins.log >> $OUT/ncu.log
tar -cf $OUT/cubins.tar c3 c2
tail -1 $OUT/write.log; cat $OUT/tests.log
awk '/^== /{l=substr($0,4)} /tg128 \|/{split($0,a,"|"); print l ":" a[8] "(" a[9] ")"} /ms of kernels/{print l ": " $0}' $OUT/timed.log $OUT/profile.log | sed 's/, round/ r/; s/ at [0-9]* s//'
grep -E '== ncu|Duration|Registers|exit|done' $OUT/ncu.log | head -40
