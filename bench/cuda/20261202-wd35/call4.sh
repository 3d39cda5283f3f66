#!/bin/bash
# Round 6, call 4 (a fresh machine staged by two short calls: $W holds main's cubins in cubin-main, the branch's
# kernels cubin for sm_90 in cubin, the model, hark-main): hark-newC, the branch with the fusion kept to the
# one-token step pass's 12 in-layer products (the logits product keeps its LayerNorm launch; the beams pass keeps
# all 13), against main, alternated, 6 rounds; the beam-5 row, 2 rounds; graphs-off profiles.
set -u
K=$(cd ${K:-.gpu/wd35/d3} && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/wd35; cd $W
el() { echo $(( $(date +%s) - S )); }
xz -dc $K/hark-newC.xz > hark-newC && chmod +x hark-newC
JFK=$W/jfk.wav; B="bench whisper --backend cuda --model q8.bin --audio $K/jfk.wav --tokens 64 -r 3"
cdir() { [ $1 = main ] && echo $W/cubin-main || echo $W/cubin; }
RES=$OUT/call4-bench.log; : > $RES
wb() {
  local o; o=$(HARK_CUDA_CUBIN_DIR=$(cdir $1) timeout 40 ./hark-$1 $B ${3:-} 2>&1)
  echo "== $1 round $2 ${3:-} at $(el) s" >> $OUT/call4-bench-full.log; echo "$o" >> $OUT/call4-bench-full.log
  local v g bm; v=$(echo "$o" | awk -F'|' '/decode \(per token\)/{gsub(/ /,"",$6); print $6}')
  g=$(echo "$o" | awk -F'|' '/greedy window \(per token/{gsub(/ /,"",$6); print $6}')
  bm=$(echo "$o" | awk -F'|' '/beam 5 window/{gsub(/ /,"",$6); print $6}')
  echo "$1 r$2 ${v:-NA} |$(echo "$o" | grep '^samples decode' | cut -d: -f2) | greedy window ${g:-NA} | beam5 ${bm:-}" >> $RES
}
for r in 1 2 3 4 5 6; do
  if [ $((r % 2)) -eq 1 ]; then wb main $r; wb newC $r; else wb newC $r; wb main $r; fi
done
for r in 1 2; do wb main b$r --beam=5; wb newC b$r --beam=5; done
echo "bench done at $(el) s" >> $RES
for b in main newC; do
  echo "== $b profile, graphs off, at $(el) s" >> $OUT/call4-profile.log
  HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 HARK_CUDA_CUBIN_DIR=$(cdir $b) timeout 40 ./hark-$b $B -r 1 >> $OUT/call4-profile.log 2>&1
done
grep -v ' rb' $RES | awk '$3!="NA" && $1!="bench"{n[$1]++; s[$1]+=$3; if(!($1 in lo)||$3<lo[$1])lo[$1]=$3; if($3>hi[$1])hi[$1]=$3} END{for(k in n) printf "%-5s mean %.4f ms (%d runs, %.3f-%.3f)\n", k, s[k]/n[k], n[k], lo[k], hi[k]}' | sort > $OUT/call4-summary.log
xz -9 $OUT/call4-bench-full.log
cat $RES $OUT/call4-summary.log; grep -A4 'cuda decode' $OUT/call4-profile.log
