#!/bin/bash
# Issue #34 round 18, call 1 (helper q34s27). One binary, branch q34s27 built -tags hark_nocubin: "var" JIT-compiles
# the branch's PTX (mat_vec_q8p's griddepcontrol.wait after its first weights' loads; the pre-pass quantize_q8x
# letting its dependents start after its own wait); "main" runs main 2fdb9c0's committed cubins (the tree's
# cuda/cubin, its SOURCE's kernels hash set to the branch's PTX so the binary takes them: the host code is the
# same, ptxpdl does not apply to cubins). (1) the 2048-wide 8-bit-activation products' geometry on main by
# HARK_CUDA_TUNE (during the JIT), (2) greedy tokens, (3) tg128 A/B alternated, (4) msltest through CUDA in three
# modes, (5) Nsight Compute stall reasons of layer 10's q8p products. From the lead's checkout root:
# K=.gpu/q34s27/c1 bash $K/call1.sh, $K holding hark.xz, msltest.test.xz, data.tar.xz, KHASH (the branch's hash).
set -u
R=$(pwd); K=${K:-.gpu/q34s27/c1}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/q34s27; export W S
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v $W/cub && cd $W
for f in hark msltest.test; do xz -T4 -dc $K/$f.xz > $f && chmod +x $f; done
tar -C $W/shared -xJf $K/data.tar.xz
cp $R/cuda/cubin/*.xz $W/cub/ && sed "s/^kernels [0-9a-f]*/kernels $(cat $K/KHASH)/" $R/cuda/cubin/SOURCE > $W/cub/SOURCE
export CUDA_CACHE_MAXSIZE=4294967296
TOK=$W/shared/llm-kit/tokenizers/smollm2; B1=$W/m/llama-1b-shape-v1-L16
run() { # main|var, then the command: main reads main's cubins
  local b=$1; shift; [ $(el) -lt 160 ] || return; if [ $b = main ]; then HARK_CUDA_CUBIN_DIR=$W/cub "$@"; else "$@"; fi; }
{ nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem --format=csv,noheader
  ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
  echo "q8_0 written at $(el) s"
  (HARK_CUDA_STARTUP=1 ./hark bench llm --backend cuda --model $B1-q8_0.gguf -r 1 --pp 0 --tg 8 > jit.log 2>&1; echo "JIT done at $(el) s" >> jit.log) &
  ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
  echo "q4_0 written at $(el) s"
  HARK_CUDA_STARTUP=1 run main ./hark bench llm --backend cuda --model $B1-q8_0.gguf -r 1 --pp 0 --tg 8 2>&1 | grep -E 'prepar|ready|rror|tg8|cubin'
  echo "main started at $(el) s"; } > $OUT/write.log 2>&1
hb() { # label main|var tune -- bench args
  local l=$1 b=$2 t=$3; shift 4; [ "$t" = default ] && t=
  [ $(el) -lt ${LIMIT:-125} ] || { echo "SKIP $l at $(el) s"; return; }
  echo "== $l at $(el) s"
  HARK_CUDA_TUNE=$t run $b ./hark bench llm --backend cuda "$@" 2>&1 | grep -E '^\| |^samples|rror'
}
C=(default MatVecQ8Groups=4 MatVecQ8Groups=65536 MatVecQ8SIMDGroups=8,MatVecQ8Groups=2 MatVecQ8Groups=3)
{ for f in q8_0 q4_0; do for t in ${C[@]}; do hb "$f $t main sweep" main $t -- --model $B1-$f.gguf -r 3 --pp 0 --tg 128; done; done
  wait; cat jit.log | grep -E 'prepar|ready|rror|JIT'; } > $OUT/sweep.log 2>&1
wait
TOP=$(awk '/^== q8_0/{l=$3} /tg128 \|/{split($0,a,"|"); s[l]+=a[8]+0; c[l]++} END{for (l in s) print s[l]/c[l], l}' $OUT/sweep.log | sort -rn | head -1 | awk '{print $2}')
echo "top: $TOP" >> $OUT/sweep.log
{ for f in q8_0 q4_0; do
    for e in "main X=1" "var X=1" "var HARK_CUDA_POISON=1"; do
      set -- $e; echo "$f $1 $2: $(env $2 bash -c "$(declare -f run el); run $1 ./hark generate --backend cuda --model $B1-$f.gguf --temp 0 --ignore-eos -n 64 'The quick brown fox'" 2>/dev/null | md5sum) at $(el) s"
    done; done; } > $OUT/tokens.log 2>&1
{ for r in 1 2; do for f in q8_0 q4_0; do
    L="main var"; [ $r = 2 ] && L="var main"
    for b in $L; do hb "$f $b default r$r" $b default -- --model $B1-$f.gguf -r 3 --pp 0 --tg 128; done
    [ "$TOP" != default ] && for b in $L; do hb "$f $b $TOP r$r" $b $TOP -- --model $B1-$f.gguf -r 3 --pp 0 --tg 128; done
  done; done; } > $OUT/ab.log 2>&1
MT='^Test(MatVecQ8Activations|MatVecQ8PreQuantizedSame|RopeAttentionMatVecQ8Activations|MatVecAllTypes|FusedMatVecAllTypes|RepackedWeights|MatVecTuning|E2EStories)$'
{ for m in normal permuted poison; do
    case $m in normal) E="X=1";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
    env $E HARK_TESTDATA=$W/shared HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 \
      timeout 45 ./msltest.test -test.run "$MT" -test.v -test.count=1 > v/msl-$m.v.log 2>&1
    echo "-- msltest $m ($E): exit $? at $(el) s, passed $(grep -c -- '--- PASS' v/msl-$m.v.log)"
    grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)|JIT|cubin' v/msl-$m.v.log | head -6
  done; } > $OUT/tests.log 2>&1
(cd v && tar -czf $OUT/test-logs.tgz *.v.log)
M='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio|dram__throughput.avg.pct_of_peak_sustained_elapsed|gpu__time_duration.sum|launch__registers_per_thread|sm__warps_active.avg.pct_of_peak_sustained_active|launch__grid_size|launch__occupancy_limit_.*'
NC=("main default"); [ "$TOP" != default ] && NC+=("main $TOP")
{ for e in "${NC[@]}"; do
    set -- $e; t=$2; [ $t = default ] && t=
    [ $(el) -lt 150 ] || break
    echo "== ncu $e at $(el) s"
    HARK_CUDA_TUNE=$t HARK_CUDA_GRAPHS=0 run $1 timeout 50 ncu --clock-control none --metrics "$M" -k 'regex:q8p_rp|quantize_q8x' -s 60 -c 6 \
      ./hark bench llm --backend cuda --model $B1-q8_0.gguf -r 1 --pp 0 --tg 8 > ncu-$1.log 2>&1; echo "exit $?"
    grep -E '  hark_|gpu__time|dram__|registers|stalled_(long|short|barrier|wait|math|mio|lg|not_sel|selected|no_inst|drain|imc|branch|dispatch|sleep|tex|membar)|warps_active|occupancy_limit' ncu-$1.log | sed 's/  */ /g' | cut -c1-110
  done; echo "== end at $(el) s"; } > $OUT/ncu.log 2>&1
tail -4 $OUT/write.log; cat $OUT/tokens.log $OUT/tests.log
awk '/^== /{l=substr($0,4)} /tg128 \|/{split($0,a,"|"); print l ":" a[8] "(" a[9] ")"}' $OUT/sweep.log $OUT/ab.log | sed 's/ at [0-9]* s//'
grep -E 'top|JIT' $OUT/sweep.log; grep -cE 'hark_' $OUT/ncu.log; tail -1 $OUT/ncu.log
