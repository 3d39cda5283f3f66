#!/bin/bash
# Round 6, call 3 of 3 (calls 1-2's warm machine: $W holds the branch's cubins in $W/cubin, the model, hark-main's
# first part), from the lead's checkout root at main 6f24a63, whose cuda/cubin are main's cubins:
# K=.gpu/wd35/c3 bash $K/call3.sh. $K holds hark-main.xz.01 (the rest of main's hark, -tags hark_nocubin) and
# hark-new.xz (the branch, -tags hark_nocubin, reading $W/cubin).
# `hark bench whisper --backend cuda --model q8.bin --audio jfk.wav --tokens 64 -r 3` (decoder ms a token, the mean
# of -r 3; its warm-up takes every timed step; and the greedy window's ms a token), main and new alternated, 6
# rounds, the order swapped each round; then the beam-5 window row (--beam 5), 2 rounds; then one graphs-off
# profile of each (HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0: launches and GPU time per kernel).
set -u
R=$(pwd); K=${K:-.gpu/wd35/c3}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=${W:-/w/wd35}
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT; [ -e $W/hark-main.xz.00 ] && [ -e $W/q8.bin ] && [ -d $W/cubin ] || { echo "not call 2's machine"; exit 3; }
grep -q '^kernels 37d91cf9a82ea7341d3a39a2cd38613064f69d10782eac88682bb8426969a217 pdl$' $R/cuda/cubin/SOURCE || { echo "the checkout's cubins are not main 6f24a63's"; exit 4; }
rm -rf $W/cubin-main; cp -r $R/cuda/cubin $W/cubin-main
cd $W; cat hark-main.xz.00 $K/hark-main.xz.01 | xz -dc > hark-main && chmod +x hark-main
xz -dc $K/hark-new.xz > hark-new && chmod +x hark-new
JFK=$W/shared/audio/jfk.wav; B="bench whisper --backend cuda --model q8.bin --audio $JFK --tokens 64 -r 3"
cdir() { [ $1 = main ] && echo $W/cubin-main || echo $W/cubin; }
RES=$OUT/call3-bench.log; : > $RES
wb() { # binary round: decoder ms a token (mean of -r 3), then the samples
  local o; o=$(HARK_CUDA_CUBIN_DIR=$(cdir $1) timeout 40 ./hark-$1 $B 2>&1)
  echo "== $1 round $2 at $(el) s" >> $OUT/call3-bench-full.log; echo "$o" >> $OUT/call3-bench-full.log
  local v g; v=$(echo "$o" | awk -F'|' '/decode \(per token\)/{gsub(/ /,"",$6); print $6}')
  g=$(echo "$o" | awk -F'|' '/greedy window \(per token/{gsub(/ /,"",$6); print $6}')
  echo "$1 r$2 ${v:-NA} |$(echo "$o" | grep '^samples decode' | cut -d: -f2) | greedy window ${g:-NA}" >> $RES
}
for r in 1 2 3 4 5 6; do
  if [ $((r % 2)) -eq 1 ]; then wb main $r; wb new $r; else wb new $r; wb main $r; fi
done
echo "bench done at $(el) s" >> $RES
# the beam-5 window (its step runs the beams pass: five rows a product, the prologue once a row), 2 rounds
for r in 1 2; do
  for b in main new; do
    [ $(el) -lt ${LIMIT:-200} ] || break
    o=$(HARK_CUDA_CUBIN_DIR=$(cdir $b) timeout 60 ./hark-$b $B --beam 5 2>&1)
    echo "== $b beam round $r at $(el) s" >> $OUT/call3-bench-full.log; echo "$o" >> $OUT/call3-bench-full.log
    echo "$b beam5-r$r $(echo "$o" | awk -F'|' '/beam 5 window/{gsub(/ /,"",$6); print $6}') | $(echo "$o" | grep '^samples beam' | cut -d: -f2)" >> $RES
  done
done
echo "beam done at $(el) s" >> $RES
for b in main new; do
  echo "== $b profile, graphs off, at $(el) s" >> $OUT/call3-profile.log
  HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 HARK_CUDA_CUBIN_DIR=$(cdir $b) timeout 40 ./hark-$b bench whisper --backend cuda --model q8.bin --audio $JFK --tokens 64 -r 1 >> $OUT/call3-profile.log 2>&1
done
echo "profiles done at $(el) s" >> $RES
grep -v beam5 $RES | awk '$3!="NA" && $1!="bench" && $1!="profiles" && $1!="beam"{n[$1]++; s[$1]+=$3; if(!($1 in lo)||$3<lo[$1])lo[$1]=$3; if($3>hi[$1])hi[$1]=$3} END{for(k in n) printf "%-5s mean %.4f ms (%d runs, %.3f-%.3f)\n", k, s[k]/n[k], n[k], lo[k], hi[k]}' | sort > $OUT/call3-summary.log
xz -9 $OUT/call3-bench-full.log
cat $RES $OUT/call3-summary.log; grep -E 'graph|launch|nodes' $OUT/call3-profile.log | head -20
