#!/bin/bash
# Issue #37, dec37 helper (2026-11-30): LLM decode (tg128) of main 43de82e ("base") against branch dec37 ("new":
# q8_0 activations quantized, the gated FFN's SiLU product computed and the K/V rows stored as f16 in AVX2/F16C
# registers, bit for bit, on the caller's serial path between a decode step's barriers) and llama.cpp, at 16, 8
# and 2 threads, alternating.
# Carry (K=.gpu/dec37): hark-base.xz, hark-new.xz (bench/cpu/20261130-cpu16/build.sh COMMIT OUT.xz at 43de82e and at
# dec37's head), llama-bench.xz (/work/s14/peers-bin: llama.cpp fork ae1a0b1c7 built on this machine class),
# smollm2.tar.xz (the tokenizer hark bench llm writes into its GGUF), call.sh. One call, warm or fresh machine
# (~4 min at the tool's speeds). Rows below 16 threads pinned to the first T CPUs with taskset (every tool); three
# rounds of base, new, llama-bench at each thread count, -r 3 each; then a CPU profile of new at 16 threads.
# Success: new's tg128 above base's at 16 and 8 threads in every round's pairing (the change shortens the caller's
# serial part of each of a token's 144 barriers' intervals; the prediction: +8 to +15% at 16 threads, less at 8,
# about +2% at 2), new/llama >= 1.0 at 16 and 8 threads, new's 2-thread figure not below base's, and new's 16-thread
# profile without ggml.quantQ8_0 / cpu.(*ewTask).Do among its top entries.
set -u
K=${K:-.gpu/dec37}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/wd37
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m && cd $W
for b in hark-base hark-new llama-bench; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -xJf $K/smollm2.tar.xz
pin() { [ "$1" -ge 16 ] || echo "taskset -c 0-$(( $1 - 1 ))"; }
{ echo "== machine"; date -u; nproc; lscpu | grep -E 'Model name|Thread|Hypervisor'; cat /proc/loadavg
  sha256sum hark-base hark-new llama-bench
  ./hark-new bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $W/smollm2 --pp 8 --tg 0 -r 1 -t 4 > /dev/null 2>&1
  M8=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf; ls -la $M8
  echo "== timed at $(el) s; $(cat /proc/loadavg)"
  for T in 16 8 2; do P=$(pin $T)
    for r in 1 2 3; do
      for h in base new; do
        echo "tg128 T=$T round $r hark-$h: $($P ./hark-$h bench llm --backend cpu --model $M8 -t $T -r 3 --pp 0 --tg 128 2>&1 | grep -E '^samples')"
      done
      echo "tg128 T=$T round $r llama-bench: $($P ./llama-bench -m $M8 -t $T -r 3 -p 0 -n 128 -o json | python3 -c '
import json,sys
for r in json.load(sys.stdin): print("mean %.2f samples t/s: %s"%(r["avg_ts"]," ".join("%.2f"%x for x in r["samples_ts"])))')"
    done
  done
  echo "== profile at $(el) s; $(cat /proc/loadavg)"
  HARK_CPUPROFILE=$OUT/tg-t16-new.pprof ./hark-new bench llm --backend cpu --model $M8 -t 16 -r 3 --pp 0 --tg 128 2>&1 | grep -E '^\| llama'
  echo "== done at $(el) s; $(cat /proc/loadavg)"; } > $OUT/dec37.log 2>&1
python3 - $OUT/dec37.log <<'PY' | tee -a $OUT/dec37.log
import re,sys,statistics as st
rows={}
for l in open(sys.argv[1]):
    m=re.match(r'tg128 T=(\d+) round \d+ (\S+): .*t/s: ([\d. ]+)',l)
    if m: rows.setdefault((int(m[1]),m[2]),[]).extend(float(x) for x in m[3].split())
for T in (16,8,2):
    b,n,l=(st.median(rows.get((T,k),[0])) for k in ('hark-base','hark-new','llama-bench'))
    print("T=%2d median tok/s: base %.1f new %.1f llama %.1f  new/base %.3f new/llama %.3f base/llama %.3f"%(T,b,n,l,n/b if b else 0,n/l if l else 0,b/l if l else 0))
PY
cat $OUT/dec37.log
