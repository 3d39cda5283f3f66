#!/bin/bash
# Lead's dec37 measurement (issue #37; fifteenth session, the H200 machine's 16 CPU cores, on the machine l2a.sh left
# warm): tg128 on the SmolLM2-135M-shaped q8_0 file of main before the dec37 merge (999a7f3, "base") and at the merge
# (8ab3a9a, "new"), both built by bench/cpu/20261130-cpu16/build.sh, alternating with llama-bench (CPU, built on this
# machine class in the fourteenth session) at 16, 8 and 2 threads (pinned to the first T cores below 16), two rounds,
# -r 3 each. $K holds hark-base.xz, hark-new.xz, llama-bench.xz, data.tar.xz.
set -u
K=${K:-.gpu/l2}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/wc
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared && cd $W
for b in hark-base hark-new llama-bench; do xz -dc $K/$b.xz > $b && chmod +x $b; done
[ -f $K/data.tar.xz ] && tar -C $W/shared -xJf $K/data.tar.xz || ln -sfn /w/shared/llm-kit $W/shared/llm-kit
pin() { [ "$1" -ge 16 ] || echo "taskset -c 0-$(( $1 - 1 ))"; }
M8=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
{ echo "== machine"; date -u; nproc; lscpu | grep -E 'Model name|Hypervisor'; cat /proc/loadavg; sha256sum hark-base hark-new llama-bench
  ./hark-new bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $W/shared/llm-kit/tokenizers/smollm2 --pp 8 --tg 0 -r 1 -t 4 > /dev/null 2>&1
  echo "== timed at $(el) s; $(cat /proc/loadavg)"
  for T in 16 8 2; do P=$(pin $T)
    for r in 1 2; do
      for h in base new; do
        echo "tg128 T=$T round $r hark-$h: $($P ./hark-$h bench llm --backend cpu --model $M8 -t $T -r 3 --pp 0 --tg 128 2>&1 | grep -E '^samples')"
      done
      echo "tg128 T=$T round $r llama-bench: $($P ./llama-bench -m $M8 -t $T -r 3 -p 0 -n 128 -o json | python3 -c '
import json,sys
for r in json.load(sys.stdin): print("mean %.2f samples t/s: %s"%(r["avg_ts"]," ".join("%.2f"%x for x in r["samples_ts"])))')"
    done
  done
  echo "== cpu done at $(el) s; $(cat /proc/loadavg)"; } > $OUT/cpu.log 2>&1
python3 - $OUT/cpu.log <<'PY' | tee -a $OUT/cpu.log
import re,sys,statistics as st
rows={}
for l in open(sys.argv[1]):
    m=re.match(r'tg128 T=(\d+) round \d+ (\S+): .*t/s: ([\d. ]+)',l)
    if m: rows.setdefault((int(m[1]),m[2]),[]).extend(float(x) for x in m[3].split())
for T in (16,8,2):
    b,n,l=(st.median(rows.get((T,k),[0])) for k in ('hark-base','hark-new','llama-bench'))
    print("T=%2d median tok/s: base %.1f new %.1f llama %.1f  new/base %.3f new/llama %.3f base/llama %.3f"%(T,b,n,l,n/b if b else 0,n/l if l else 0,b/l if l else 0))
PY
cat $OUT/cpu.log
