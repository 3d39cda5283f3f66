#!/bin/bash
# Issue #34 round 18, call 2 (helper q34s27): what fits the rest of the device cap after four failed machine
# starts. Main 2fdb9c0's committed cubins only (the branch's binary, -tags hark_nocubin, with the tree's cuda/cubin
# and its SOURCE's kernels hash set to the branch's PTX, so nothing is JIT-compiled: the host code is main's, ptxpdl
# does not apply to cubins): the 2048-wide 8-bit-activation products' geometry by HARK_CUDA_TUNE on the 1B shape's
# q8_0 tg128, once each, then Nsight Compute's stall reasons of layer 10's q8p launches at the default. From the lead's checkout root: K=.gpu/q34s27/c1 bash $K/call2.sh (call 1's folder).
set -u
R=$(pwd); K=${K:-.gpu/q34s27/c1}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/q34s27
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/cub && cd $W
xz -T4 -dc $K/hark.xz > hark && chmod +x hark
tar -C $W/shared -xJf $K/data.tar.xz ./llm-kit/tokenizers
cp $R/cuda/cubin/*.xz $W/cub/ && sed "s/^kernels [0-9a-f]*/kernels $(cat $K/KHASH)/" $R/cuda/cubin/SOURCE > $W/cub/SOURCE
export HARK_CUDA_CUBIN_DIR=$W/cub
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/llama-1b-shape-v1-L16-q8_0.gguf
{ nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem --format=csv,noheader
  ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
  echo "q8_0 written at $(el) s"
  HARK_CUDA_STARTUP=1 ./hark bench llm --backend cuda --model $F -r 1 --pp 0 --tg 8 2>&1 | grep -E 'prepar|ready|rror|tg8|cubin'
  for r in 1; do
    C="default MatVecQ8Groups=4 MatVecQ8Groups=65536 MatVecQ8SIMDGroups=8,MatVecQ8Groups=2 MatVecQ8Groups=3"
    [ $r = 2 ] && C="MatVecQ8Groups=3 MatVecQ8SIMDGroups=8,MatVecQ8Groups=2 MatVecQ8Groups=65536 MatVecQ8Groups=4 default"
    for t in $C; do v=$t; [ $t = default ] && v=
      echo "== q8_0 $t r$r at $(el) s"; HARK_CUDA_TUNE=$v ./hark bench llm --backend cuda --model $F -r 3 --pp 0 --tg 128 2>&1 | grep -E '^\| |rror'
    done; done; } > $OUT/sweep.log 2>&1
M='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio|dram__throughput.avg.pct_of_peak_sustained_elapsed|gpu__time_duration.sum|launch__registers_per_thread|sm__warps_active.avg.pct_of_peak_sustained_active|launch__grid_size|launch__occupancy_limit_.*'
{ for t in default; do v=$t; [ $t = default ] && v=
    [ $(el) -lt 60 ] || break
    echo "== ncu $t at $(el) s"
    HARK_CUDA_TUNE=$v HARK_CUDA_GRAPHS=0 timeout 30 ncu --clock-control none --metrics "$M" -k 'regex:q8p_rp|quantize_q8x' -s 60 -c 6 \
      ./hark bench llm --backend cuda --model $F -r 1 --pp 0 --tg 4 > ncu-$t.log 2>&1; echo "exit $?"
    grep -E '  hark_|gpu__time|dram__|registers|stalled_(long|short|barrier|wait|math|mio|lg|not_sel|selected|no_inst|drain|imc|branch|dispatch|sleep|tex|membar)|warps_active|occupancy_limit' ncu-$t.log | sed 's/  */ /g' | cut -c1-110
  done; echo "== end at $(el) s"; } > $OUT/ncu.log 2>&1
head -4 $OUT/sweep.log
awk '/^== /{l=substr($0,4)} /tg128 \|/{split($0,a,"|"); print l ":" a[8] "(" a[9] ")"}' $OUT/sweep.log | sed 's/ at [0-9]* s//'
grep -cE 'hark_' $OUT/ncu.log; tail -1 $OUT/ncu.log
