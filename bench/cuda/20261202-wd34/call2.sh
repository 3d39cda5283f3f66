#!/bin/bash
# Issue #34's Whisper decoder row, round 5 (tuning only), branch wd34, call 2 of 2 (call 1's warm machine: $W holds
# hark, main's cubins, the data, q8.xz.00 and the LLM files), from the lead's checkout root: K=.gpu/wd34/c2 bash
# $K/call2.sh. $K holds q8.xz.01 and msltest.test.xz (main, -tags hark_nocubin, reading $W/cubin).
# Phase 1, the sweep: `hark bench whisper --backend cuda --model q8.bin --audio jfk.wav --tokens 64 -r 3` (decoder
# ms a token, the mean of -r 3) under HARK_CUDA_TUNE candidates of the fields the decoder step's launches use, 3
# rounds, each round's order rotated, the default at each round's start and after every 5 candidates.
# Phase 2, the confirmation (picked by the script from phase 1, so no machine waits on a reader): the 3 best
# candidates under the default's mean, and the join of each field family's best, against the default, 6 rounds
# alternated. Phase 3: the LLM rows (SmolLM2-shape and 1B-shape tg128 q8_0) for the best two of phase 2 against
# the default, 4 rounds alternated. Phase 4: msltest through CUDA with the device's tuning and the best candidate
# (HARK_CUDA_TUNE), normal, permuted and poisoned: TestE2EWhisperJFK (greedy, beam 5) and the mat-vec, norm,
# attention and embed kernels' tests.
set -u
R=$(pwd); K=${K:-.gpu/wd34/c2}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=${W:-/w/wd34}
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT; [ -x $W/hark ] && [ -e $W/q8.xz.00 ] || { echo "not call 1's machine"; exit 3; }
cd $W; cp $K/q8.xz.0* $W/; xz -dc $K/msltest.test.xz > msltest.test && chmod +x msltest.test
[ -e q8.bin ] || cat q8.xz.0? | xz -dc > q8.bin
sha256sum q8.bin; cp -n q8.bin shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_CUDA_CUBIN_DIR=$W/cubin HARK_TESTDATA=$W/shared
JFK=$W/shared/audio/jfk.wav
RES=$OUT/call2-whisper.log; : > $RES
wb() { # phase tune: decoder ms a token (mean of -r 3), then the samples
  [ $(el) -lt ${LIMIT:-380} ] || { echo "$1 ${2:-default} NA | skipped at $(el) s" >> $RES; return; }
  local o; o=$(env HARK_CUDA_TUNE="$2" timeout 30 ./hark bench whisper --backend cuda --model q8.bin --audio $JFK --tokens 64 -r 3 2>&1)
  echo "== $1 ${2:-default} at $(el) s" >> $OUT/call2-whisper-full.log; echo "$o" >> $OUT/call2-whisper-full.log
  local v; v=$(echo "$o" | awk -F'|' '/decode \(per token\)/{gsub(/ /,"",$6); print $6}')
  echo "$1 ${2:-default} ${v:-NA} |$(echo "$o" | grep '^samples decode' | cut -d: -f2)" >> $RES
}
C=(MatVecRows=1,MatVecSIMDGroups=4 MatVecRows=3,MatVecSIMDGroups=4 MatVecRows=4,MatVecSIMDGroups=4
   MatVecRows=1,MatVecSIMDGroups=1 MatVecRows=2,MatVecSIMDGroups=1 MatVecRows=3,MatVecSIMDGroups=1 MatVecRows=4,MatVecSIMDGroups=1
   MatVecRows=1,MatVecSIMDGroups=2 MatVecRows=2,MatVecSIMDGroups=2 MatVecRows=3,MatVecSIMDGroups=2 MatVecRows=4,MatVecSIMDGroups=2
   MatVecRows=1,MatVecSIMDGroups=8 MatVecRows=2,MatVecSIMDGroups=8 MatVecRows=3,MatVecSIMDGroups=8 MatVecRows=4,MatVecSIMDGroups=8
   NormThreads=32 NormThreads=64 NormThreads=128 NormThreads=384
   AttnChunk=64 AttnChunk=128 AttnMaxChunks=16 AttnMaxChunks=24 AttnMaxChunks=32
   EmbedThreads=384 Repack=1)
N=${#C[@]}
for r in 1 2 3; do
  off=$(( (r - 1) * N / 3 ))
  for i in $(seq 0 $((N - 1))); do
    [ $((i % 5)) -eq 0 ] && wb sweep-r$r ""
    wb sweep-r$r "${C[$(( (i + off) % N ))]}"
  done
done
wb sweep-r3 ""
echo "sweep done at $(el) s" >> $RES
# family of a tune string
fam() { case $1 in MatVec*) echo mv;; Norm*) echo norm;; Attn*) echo attn;; *) echo other;; esac; }
grep '^sweep-r' $RES | awk '$3!="NA"{n[$2]++; s[$2]+=$3} END{for(k in n) printf "%s %.4f %d\n", k, s[k]/n[k], n[k]}' | sort -k2,2n > $OUT/call2-sweep-summary.log
D=$(awk '$1=="default"{print $2}' $OUT/call2-sweep-summary.log)
P=($(awk -v d=$D '$1!="default" && $2<d{print $1}' $OUT/call2-sweep-summary.log | head -3))
J=""; for f in mv norm attn other; do
  b=$(awk -v d=$D '$1!="default" && $2<d{print $1}' $OUT/call2-sweep-summary.log | while read t; do [ $(fam $t) = $f ] && { echo $t; break; }; done)
  [ -n "$b" ] && J="${J:+$J,}$b"; done
case ",$(IFS=,; echo "${P[*]}")," in *",$J,"*) ;; *) [ -n "$J" ] && P+=("$J");; esac
echo "phase 2 candidates (default's sweep mean $D): ${P[*]:-none}" >> $RES
if [ ${#P[@]} -gt 0 ]; then
  for r in 1 2 3 4 5 6; do
    wb confirm-r$r ""
    for i in $(seq 0 $((${#P[@]} - 1))); do wb confirm-r$r "${P[$(( (i + r) % ${#P[@]} ))]}"; done
  done
  wb confirm-r6 ""
fi
echo "confirm done at $(el) s" >> $RES
grep '^confirm-r' $RES | awk '$3!="NA"{n[$2]++; s[$2]+=$3; if(!($2 in lo)||$3<lo[$2])lo[$2]=$3; if($3>hi[$2])hi[$2]=$3} END{for(k in n) printf "%s %.4f %d %.3f-%.3f\n", k, s[k]/n[k], n[k], lo[k], hi[k]}' | sort -k2,2n > $OUT/call2-confirm-summary.log
DC=$(awk '$1=="default"{print $2}' $OUT/call2-confirm-summary.log)
B=($(awk -v d=${DC:-0} '$1!="default" && $2<d{print $1}' $OUT/call2-confirm-summary.log | head -2))
TOK=$W/shared/llm-kit/tokenizers/smollm2; SM=m/smollm2-135m-shape-v1-L30-q8_0.gguf; B1=m/llama-1b-shape-v1-L16-q8_0.gguf
hl() { # phase model tune
  [ $(el) -lt ${LIMIT:-380} ] || return
  local o; o=$(env HARK_CUDA_TUNE="$3" timeout 60 ./hark bench llm --backend cuda --model $2 -r 3 --pp 0 --tg 128 2>&1)
  echo "== $1 $2 ${3:-default}" >> $OUT/call2-llm-full.log; echo "$o" >> $OUT/call2-llm-full.log
  echo "$1 ${3:-default} $(echo "$o" | awk -F'|' '/tg128 \|/{split($8,a," "); print a[1]}') |$(echo "$o" | grep '^samples' | cut -d: -f2)" >> $OUT/call2-llm.log
}
: > $OUT/call2-llm.log
if [ ${#B[@]} -gt 0 ]; then
  for r in 1 2 3 4; do for m in $SM $B1; do
    l=$(basename $m .gguf | cut -d- -f1-2)-r$r; hl $l $m ""; for b in "${B[@]}"; do hl $l $m "$b"; done
  done; done
fi
echo "llm done at $(el) s" >> $OUT/call2-llm.log
MT='^Test(E2EWhisperJFK|MatVecAllTypes|FusedMatVecAllTypes|RepackedWeights|MatVecTuning|MatVecGELUOut|NormKernels|AttentionKernel|RopeAttentionKernel|AttentionTicketAligned|AttentionMergeChunks|EmbedAllTypes|EmbedAdd)$'
T=${B[0]:-}
{ echo "tune under test: ${T:-none (no candidate beat the default)}"
  if [ -n "$T" ]; then
    for m in normal permuted poison; do
      case $m in normal) E="X=1";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
      ( env $E HARK_CUDA_TUNE=$T HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 150 ./msltest.test -test.run "$MT" -test.v -test.count=1 > v/msl-$m.v.log 2>&1; echo "exit $? at $(el) s" >> v/msl-$m.v.log ) &
    done; wait
    for m in normal permuted poison; do
      echo "-- msltest $m: $(tail -1 v/msl-$m.v.log), passed $(grep -c -- '--- PASS' v/msl-$m.v.log)"
      grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)|JIT|compil' v/msl-$m.v.log | head -8
      grep -E 'beams [15]: msltest on cuda' v/msl-$m.v.log | cut -c1-170
    done
  fi; echo "tests done at $(el) s"; } > $OUT/call2-tests.log 2>&1
(cd v && tar -cJf $OUT/call2-test-logs.tar.xz *.v.log 2>/dev/null)
xz -9 $OUT/call2-whisper-full.log; [ -s $OUT/call2-llm-full.log ] && xz -9 $OUT/call2-llm-full.log
echo "== sweep (tune, mean ms, runs)"; cat $OUT/call2-sweep-summary.log
echo "== confirm (tune, mean ms, runs, range)"; cat $OUT/call2-confirm-summary.log; tail -2 $RES
echo "== llm"; awk '$1!="llm"{split($1,a,"-r"); k=a[1]" "$2; n[k]++; s[k]+=$3} END{for(k in n) printf "%-50s %7.1f tok/s (%d)\n", k, s[k]/n[k], n[k]}' $OUT/call2-llm.log | sort; tail -1 $OUT/call2-llm.log
cat $OUT/call2-tests.log
