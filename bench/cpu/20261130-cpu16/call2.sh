#!/bin/bash
# Issue #37, cpu16 helper, call 2 (2026-11-30): main a2d18b3 ("base") against branch cpu16 ("new": VMAXPS max in the
# Whisper filters' log-sum-exp, gemmSplit tiles cut along the input rows) and the peers, in two parts on one warm
# machine (the transfer has no room for two Hark binaries and the kit model at once):
#   K=.gpu/cpu16 call2.sh llm       carry: hark-base.xz hark-new.xz (build.sh), llama-bench.xz whisper-cli.xz (the
#                                   peers built on this machine class this session), smollm2.tar.xz, call2.sh
#   K=.gpu/cpu16w call2.sh whisper  carry: model.xz q8split.py excerpt.flac excerpt-expected.txt; reuses /w's binaries
# Rows below 16 threads pinned to the first T CPUs with taskset (every tool); tools alternate at each thread count.
set -u
PART=$1
K=${K:-.gpu/cpu16}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/o && cd $W
{ echo "== machine"; date -u; nproc; lscpu | grep -E 'Model name|Thread|Hypervisor'; cat /proc/loadavg; } > $OUT/machine-$PART.log 2>&1
pin() { [ "$1" -ge 16 ] || echo "taskset -c 0-$(( $1 - 1 ))"; }
TIMEFORMAT=%R
if [ $PART = llm ]; then
  for b in hark-base hark-new llama-bench whisper-cli; do xz -dc $K/$b.xz > $b && chmod +x $b; done
  tar -xJf $K/smollm2.tar.xz
  sha256sum hark-base hark-new llama-bench whisper-cli >> $OUT/machine-$PART.log
  ./hark-new bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $W/smollm2 --pp 8 --tg 0 -r 1 -t 4 > $OUT/write.log 2>&1
  M8=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
  { echo "== timed (llm) at $(el) s; $(cat /proc/loadavg)"
  for T in 16 2; do P=$(pin $T)
    for h in base new; do
      echo "== LLM T=$T pp=512 tg=128 hark-$h"
      $P ./hark-$h bench llm --backend cpu --model $M8 -t $T -r 3 --pp 512 --tg 128 2>&1 | grep -E '^\| llama|^samples'
    done
    echo "== LLM T=$T pp=512 tg=128 llama-bench"
    $P ./llama-bench -m $M8 -t $T -r 3 -p 512 -n 128 -o json | python3 -c '
import json,sys
for r in json.load(sys.stdin):
    t="pp%d"%r["n_prompt"] if r["n_prompt"] else "tg%d"%r["n_gen"]
    print("llama-bench %s t=%d mean %.2f samples t/s: %s"%(t,r["n_threads"],r["avg_ts"]," ".join("%.2f"%x for x in r["samples_ts"])))'
  done
  echo "== done at $(el) s; $(cat /proc/loadavg)"; } > $OUT/timed-llm.log 2>&1
  cat $OUT/machine-$PART.log $OUT/timed-llm.log
  exit 0
fi
[ -x hark-new ] && [ -x whisper-cli ] || { echo "no binaries left by the llm part on this machine"; exit 1; }
xz -dc $K/model.xz > q8s.bin && python3 $K/q8split.py join q8s.bin q8.bin && rm q8s.bin && cp $K/excerpt.flac .
sha256sum hark-base hark-new whisper-cli q8.bin >> $OUT/machine-$PART.log
check() { python3 - "$1" "$K/excerpt-expected.txt" <<'PY'
import re,sys
got=' '.join(re.sub(r'^\[[^]]*\]','',l) for l in open(sys.argv[1]).read().splitlines())
got=' '.join(got.split()); exp=' '.join(open(sys.argv[2]).read().split())
print('OK' if got==exp else 'BAD(%d vs %d chars; first diff at %d)'%(len(got),len(exp),next((i for i,(a,b) in enumerate(zip(got,exp)) if a!=b),min(len(got),len(exp)))))
PY
}
hk() { t=$( { time $P ./hark-$1 transcribe --backend cpu --model q8.bin --beam 1 --threads $T --format txt excerpt.flac > o/h.txt 2>o/h.err; } 2>&1 ); echo "RESULT q8_0 hark-$1 T=$T beam=1 run=$r ${t}s $(check o/h.txt)"; }
wcpp() { t=$( { time $P ./whisper-cli -m q8.bin -f excerpt.flac -t $T -bs 1 -np -nt > o/w.txt 2>o/w.err; } 2>&1 ); echo "RESULT q8_0 whisper.cpp T=$T beam=1 run=$r ${t}s $(check o/w.txt)"; }
{ echo "== timed (whisper) at $(el) s; $(cat /proc/loadavg)"
for T in 16 8; do P=$(pin $T)
  for r in 1 2; do hk base; hk new; wcpp; done
done
for T in 4 2; do P=$(pin $T); r=1; hk new; wcpp; done
for h in base new; do echo "== bench whisper T=16 hark-$h"
  ./hark-$h bench whisper --backend cpu --model q8.bin --audio excerpt.flac -t 16 --tokens 64 -r 3 2>&1 | grep -E '^\||^samples'
done
echo "== done at $(el) s; $(cat /proc/loadavg)"; } > $OUT/timed-whisper.log 2>&1
cp o/h.txt $OUT/h.txt; cp o/w.txt $OUT/w.txt
cat $OUT/machine-$PART.log $OUT/timed-whisper.log
