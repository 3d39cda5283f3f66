#!/bin/bash
# Issue #34 round 19, call 1 (helper q34s28): q34s27's never-run call2.sh grown into one call. Main c25ff91's
# committed cubins (PDL form; the branch changes no kernel, so the binary's PTX hashes are SOURCE's and nothing is
# JIT-compiled): the 1B shape's tg128 (q8_0 and q4_0) over HARK_CUDA_TUNE candidates, alternated rounds with the
# order rotated, then the best candidate's correctness (greedy tokens against the default, plain / permuted /
# poisoned; msltest through CUDA with the device's tuning plus the candidate), then Nsight Compute of layer 10's
# q8p launches at the default and the best. From the lead's checkout root: K=.gpu/q34s28 bash $K/call1.sh, $K
# holding hark.xz and msltest.test.xz (-tags hark_nocubin), cub/ (main's sm_90 cubins and SOURCE) and data.tar.xz.
set -u
R=$(pwd); K=${K:-.gpu/q34s28}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/q34s28
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v
for f in hark msltest.test; do xz -T4 -dc $K/$f.xz > $W/$f && chmod +x $W/$f; done
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_CUDA_CUBIN_DIR=$K/cub HARK_TESTDATA=$W/shared
cd $W
TOK=$W/shared/llm-kit/tokenizers/smollm2; B1=$W/m/llama-1b-shape-v1-L16
# the candidates: name=HARK_CUDA_TUNE ("" the cuda family's default)
C=(default= G3=MatVecQ8Groups=3 G4=MatVecQ8Groups=4 Gmax=MatVecQ8Groups=65536 SG8G2=MatVecQ8SIMDGroups=8,MatVecQ8Groups=2
   SG2G8=MatVecQ8SIMDGroups=2,MatVecQ8Groups=8 SG8G1=MatVecQ8SIMDGroups=8,MatVecQ8Groups=1
   L4G4=MatVecQ8SIMDGroupsLong=4,MatVecQ8GroupsLong=4 AC64=AttnChunk=64 FS16=AttnFoldSlices=16 FS4=AttnFoldSlices=4)
N=${#C[@]}
{ nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem --format=csv,noheader
  ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
  echo "files written at $(el) s"; ls -la $W/m
  HARK_CUDA_STARTUP=1 ./hark bench llm --backend cuda --model $B1-q8_0.gguf -r 1 --pp 0 --tg 8 2>&1 | grep -E 'prepar|ready|rror|tg8|cubin|JIT|PDL'
  for r in 1 2 3 4; do for t in q8_0 q4_0; do
    [ $(el) -lt 165 ] || { echo "SKIP round $r $t at $(el) s"; break 2; }
    for i in $(seq 0 $((N - 1))); do
      j=$(( (i + 3 * (r - 1)) % N )); [ $((r % 2)) = 0 ] && j=$(( (N - 1 - i + 3 * (r - 1)) % N ))
      c=${C[$j]}; n=${c%%=*}; v=${c#*=}
      echo "== $t $n r$r at $(el) s"
      HARK_CUDA_TUNE=$v ./hark bench llm --backend cuda --model $B1-$t.gguf -r 5 --pp 0 --tg 128 2>&1 | grep -E '^\| .*tg|^samples|rror'
    done; done; done; echo "sweep end at $(el) s"; } > $OUT/sweep.log 2>&1
# per (type, candidate): rounds, mean of the rounds' means, min, max
awk '/^== /{t=$2; n=$3} /tg128 \|/{split($0,a,"|"); split(a[8],b,"±"); v=b[1]+0; k=t" "n; c[k]++; s[k]+=v; if(!(k in lo)||v<lo[k])lo[k]=v; if(v>hi[k])hi[k]=v}
  END{for(k in c) printf "%s %d %.1f %.1f %.1f\n", k, c[k], s[k]/c[k], lo[k], hi[k]}' $OUT/sweep.log | sort -k1,1 -k4,4nr > $OUT/summary.txt
BEST=$(awk '$1=="q8_0" && $2!="default"{print $2; exit}' $OUT/summary.txt)
BV=; for c in "${C[@]}"; do [ "${c%%=*}" = "$BEST" ] && BV=${c#*=}; done
MT='^Test(MatVecQ8Activations|MatVecQ8PreQuantizedSame|RopeAttentionMatVecQ8Activations|MatVecTuning|MatVecAllTypes|E2EStories)$'
{ echo "best q8_0 candidate: $BEST ($BV)"
  for m in normal permuted poison; do
    case $m in normal) E="X=1";; permuted) E="HARK_CUDA_PERMUTE=20261203";; poison) E="HARK_CUDA_POISON=1";; esac
    for f in q8_0 q4_0; do for tv in "" "$BV"; do
      echo "$m $f tune=[$tv] md5 $(env $E HARK_CUDA_TUNE=$tv ./hark generate --backend cuda --model $B1-$f.gguf --temp 0 --ignore-eos -n 64 'The quick brown fox' 2>/dev/null | md5sum | cut -c1-12) at $(el) s"
    done; done
    env $E HARK_CUDA_TUNE=$BV HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 \
      timeout 60 ./msltest.test -test.run "$MT" -test.v -test.count=1 > v/msl-$m.v.log 2>&1
    echo "-- msltest $m ($E, HARK_CUDA_TUNE=$BV): exit $? at $(el) s, passed $(grep -c -- '--- PASS' v/msl-$m.v.log)"
    grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)|JIT|cubin' v/msl-$m.v.log | head -8
  done; } > $OUT/tests.log 2>&1
(cd v && tar -czf $OUT/test-logs.tgz *.v.log)
M='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio|dram__throughput.avg.pct_of_peak_sustained_elapsed|gpu__time_duration.sum|launch__registers_per_thread|sm__warps_active.avg.pct_of_peak_sustained_active|launch__grid_size|launch__occupancy_limit_.*'
{ for tv in "" "$BV"; do
    [ $(el) -lt 240 ] || { echo "SKIP ncu [$tv] at $(el) s"; break; }
    echo "== ncu tune=[$tv] at $(el) s"
    HARK_CUDA_TUNE=$tv HARK_CUDA_GRAPHS=0 timeout 30 ncu --clock-control none --metrics "$M" -k 'regex:q8p_rp|quantize_q8x' -s 60 -c 6 \
      ./hark bench llm --backend cuda --model $B1-q8_0.gguf -r 1 --pp 0 --tg 4 > v/ncu.log 2>&1; echo "exit $?"
    grep -E '  hark_|gpu__time|dram__|registers|grid_size|stalled_(long|short|barrier|wait|math|mio|lg|not_sel|selected|no_inst|drain|imc|branch|dispatch|sleep|tex|membar)|warps_active|occupancy_limit' v/ncu.log | sed 's/  */ /g' | cut -c1-110
  done; echo "== end at $(el) s"; } > $OUT/ncu.log 2>&1
head -3 $OUT/sweep.log; grep -E 'cubin|JIT|PDL|SKIP|sweep end' $OUT/sweep.log | head -5
echo "type candidate rounds mean min max"; cat $OUT/summary.txt
cat $OUT/tests.log | grep -v '^\s*$' | cut -c1-150; tail -1 $OUT/ncu.log
