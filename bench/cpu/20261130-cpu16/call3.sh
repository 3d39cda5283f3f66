#!/bin/bash
# Issue #37, cpu16 helper, call 3 (2026-11-30): LLM prefill (pp512) of the final branch against main and against the
# binary call 2 measured, which differ in gemmSplit's rule for cutting along the input rows (call 2's "new": cut
# where the weight rows give fewer than two chunks per worker; final: only where they leave a worker without one).
# Carry (K=.gpu/cpu16): hark-base.xz (main a2d18b3), hark-new.xz (9f19c00, call 2), hark-final.xz (75bbf01),
# smollm2.tar.xz, call3.sh. Rows below 16 threads pinned with taskset; binaries alternate.
set -u
K=${K:-.gpu/cpu16}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w3
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m && cd $W
for b in hark-base hark-new hark-final; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -xJf $K/smollm2.tar.xz
{ date -u; nproc; cat /proc/loadavg; sha256sum hark-base hark-new hark-final
./hark-final bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $W/smollm2 --pp 8 --tg 0 -r 1 -t 4 > /dev/null 2>&1
M8=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
echo "== timed at $(el) s; $(cat /proc/loadavg)"
for T in 16 16 2; do P=""; [ $T = 2 ] && P="taskset -c 0-1"
  for h in base new final; do
    echo "== LLM T=$T pp=512 hark-$h: $($P ./hark-$h bench llm --backend cpu --model $M8 -t $T -r 3 --pp 512 --tg 0 2>&1 | grep -E '^samples')"
  done
done
echo "== done at $(el) s; $(cat /proc/loadavg)"; } > $OUT/call3.log 2>&1
cat $OUT/call3.log
