#!/bin/bash
# Issue #34 round 21, call 2 (helper q34s31): only on the SAME warm machine as call 1 (reuses /w/q34s31: hark, the
# files and the graphs-on llama.cpp build); exits at once if that state is gone. ~40 s: round 2 of the SmolLM2
# q4_0 / f16 trios (order llama, llamanograph, hark), llama-batched-bench with GGML_CUDA_DISABLE_GRAPHS=1 (the
# anchor's form, beside call 1's graphs-on run), Hark's SmolLM2 q8_0 launches a token with graphs off and its
# per-kernel profile (HARK_CUDA_PROFILE=1), then 1B q8_0 / q4_0 trios while under the gate.
# From the lead's checkout root: K=.gpu/q34s31 bash .gpu/q34s31/call2.sh
set -u
OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/q34s31; STOP=${STOP:-34}
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT
LB=$W/bl/bin/llama-bench; BB=$W/bl/bin/llama-batched-bench; B1=$W/m/llama-1b-shape-v1-L16; SM=$W/m/smollm2-135m-shape-v1-L30
for f in $W/hark $LB $BB $SM-q8_0.gguf $SM-q4_0.gguf $SM-f16.gguf $B1-q8_0.gguf; do
  [ -e $f ] || { echo "call 1's state is gone ($f): nothing run"; ls /w; exit 0; }; done
cd $W
run() { # prog, label, round, file
  echo "== $1 $2 r$3 at $(el) s"
  case $1 in
    hark) timeout 20 ./hark bench llm --backend cuda --model $4 -r 5 --pp 0 --tg 128 2>&1 | grep -E 'tg128 \||^samples|copy|rror' ;;
    llama) timeout 20 $LB -m $4 -ngl 99 -r 5 -p 0 -n 128 2>&1 | grep -E '^\| .*tg128|rror' ;;
    llamanograph) GGML_CUDA_DISABLE_GRAPHS=1 timeout 20 $LB -m $4 -ngl 99 -r 5 -p 0 -n 128 2>&1 | grep -E '^\| .*tg128|rror' ;;
  esac; }
{ echo "call 2 from $(el) s; load $(cat /proc/loadavg)"; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
  for x in SmolLM2-q4_0:$SM-q4_0 SmolLM2-f16:$SM-f16; do for p in llama llamanograph hark; do run $p ${x%%:*} 2 ${x#*:}.gguf; done; done
  echo "== batched GGML_CUDA_DISABLE_GRAPHS=1 at $(el) s"
  GGML_CUDA_DISABLE_GRAPHS=1 timeout 20 $BB -m $SM-q8_0.gguf -ngl 99 -c 16384 -b 2048 -ub 512 -npp 128 -ntg 128 -npl 1,2,4,8,16,32 2>&1 | grep -E '^\||rror'
  echo "== hark SmolLM2-q8_0 graphs off, profile at $(el) s"
  HARK_CUDA_GRAPHS=0 HARK_CUDA_PROFILE=1 timeout 20 ./hark bench llm --backend cuda --model $SM-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -E '^cuda tg|^  |tg128 \|'
  r=3; for x in 1B-q8_0:$B1-q8_0 1B-q4_0:$B1-q4_0; do
    [ $(el) -lt $STOP ] || { echo "SKIP r$r ${x%%:*} at $(el) s"; break; }
    for p in llamanograph hark llama; do run $p ${x%%:*} $r ${x#*:}.gguf; done; done
  echo "call 2 end at $(el) s"; } > $OUT/bench2.log 2>&1
cat $OUT/bench2.log
