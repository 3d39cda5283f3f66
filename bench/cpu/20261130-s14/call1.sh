#!/bin/bash
# Issue #37, fourteenth session, lead's first call (2026-11-30): the scaling table on the device machine's 16 cores
# for main a2d18b3, the peers built in this call, and CPU profiles of Hark at 16 threads for the work that follows.
# Carry ($K): hark.xz (main built as bench/cpu/prep.sh says: CGO_ENABLED=0, PTX emptied, CLI trimmed to transcribe,
# quantize and bench), model.xz (the kit q8_0 file split by q8split.py), q8split.py, excerpt.flac (the long-form file
# cut at 204.2 s), excerpt-expected.txt (the kit reference's greedy text of the segments starting before 204.2 s),
# peers-src.tar.xz (build-peers.sh prepare's trees, other backends and architectures dropped), build-peers.sh,
# smollm2.tar.xz (the tokenizer hark bench llm writes into its GGUF).
# The transfer (tracked tree ~34 MB) leaves no room for all of it at once, so it runs in two parts, one call each on
# the same warm machine: `call1.sh llm` (carry: hark.xz, peers-src.tar.xz, build-peers.sh, smollm2.tar.xz) builds
# the peers, runs the LLM rows and returns the peers' binaries; `call1.sh whisper` (carry: model.xz, q8split.py,
# excerpt.flac, excerpt-expected.txt) reuses that Hark binary and those peers from /w.
# Rules (issue 12/37): Hark and the peer alternate on the same file at the same thread count, rows below 16 threads
# pinned to the first T CPUs with taskset (both tools). Returns the peers' binaries (xz) for later calls.
set -u
PART=$1
K=${K:-.gpu/cpu37}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/o && cd $W
{ echo "== machine"; date -u; uname -r; nproc; lscpu | grep -E 'Model name|Socket|Core|Thread|NUMA node0|Hypervisor'
  grep -o -w -E 'avx2|avx512f|avx512_vnni|avx512_bf16|amx_tile|amx_int8' /proc/cpuinfo | sort | uniq -c
  ldconfig -p | grep -i -E 'openblas|libblas' | head -3; echo "(no line above: no OpenBLAS on this machine)"
  cat /proc/loadavg; } > $OUT/machine.log 2>&1
if [ $PART = llm ]; then
  xz -dc $K/hark.xz > hark && chmod +x hark
  tar -xJf $K/peers-src.tar.xz && tar -xJf $K/smollm2.tar.xz
  ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $W/smollm2 --pp 8 --tg 0 -r 1 -t 4 > $OUT/write.log 2>&1
  bash $K/build-peers.sh build $W $W/peers --cpu > $OUT/build.log 2>&1; echo "build exit $? at $(el) s" >> $OUT/build.log
  for b in whisper-cli llama-bench; do xz -T16 -6 -c $W/peers/bin/$b > $OUT/$b.xz; done
else
  [ -x hark ] && [ -x peers/bin/whisper-cli ] || { echo "no Hark or whisper.cpp left by the llm part on this machine"; exit 1; }
  xz -dc $K/model.xz > q8s.bin && python3 $K/q8split.py join q8s.bin q8.bin && rm q8s.bin && cp $K/excerpt.flac .
fi
sha256sum hark q8.bin >> $OUT/machine.log 2>&1
pin() { [ "$1" -ge 16 ] || echo "taskset -c 0-$(( $1 - 1 ))"; }
check() { python3 - "$1" "$K/excerpt-expected.txt" <<'PY'
import re,sys
got=' '.join(re.sub(r'^\[[^]]*\]','',l) for l in open(sys.argv[1]).read().splitlines())
got=' '.join(got.split()); exp=' '.join(open(sys.argv[2]).read().split())
print('OK' if got==exp else 'BAD(%d vs %d chars; first diff at %d)'%(len(got),len(exp),next((i for i,(a,b) in enumerate(zip(got,exp)) if a!=b),min(len(got),len(exp)))))
PY
}
TIMEFORMAT=%R
M8=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
{ echo "== timed ($PART) at $(el) s; $(cat /proc/loadavg)"
if [ $PART = whisper ]; then
for T in 16 8 4 2; do P=$(pin $T)
  for r in 1 2; do
    t=$( { time $P ./hark transcribe --backend cpu --model q8.bin --beam 1 --threads $T --format txt excerpt.flac > o/h.txt 2>o/h.err; } 2>&1 ); echo "RESULT q8_0 hark T=$T beam=1 run=$r ${t}s $(check o/h.txt)"
    t=$( { time $P ./peers/bin/whisper-cli -m q8.bin -f excerpt.flac -t $T -bs 1 -np -nt > o/w.txt 2>o/w.err; } 2>&1 ); echo "RESULT q8_0 whisper.cpp T=$T beam=1 run=$r ${t}s $(check o/w.txt)"
  done
done
HARK_CPUPROFILE=$OUT/whisper-t16.pprof ./hark transcribe --backend cpu --model q8.bin --beam 1 --threads 16 --format txt excerpt.flac > o/h.txt 2>o/h.err; echo "whisper T=16 profiled: $(check o/h.txt)"
HARK_CPUPROFILE=$OUT/whisper-t2.pprof taskset -c 0-1 ./hark transcribe --backend cpu --model q8.bin --beam 1 --threads 2 --format txt excerpt.flac > o/h.txt 2>o/h.err; echo "whisper T=2 profiled: $(check o/h.txt)"
else
for T in 16 2 8 4; do P=$(pin $T)
  pp=512; [ $T = 4 -o $T = 8 ] && pp=0
  echo "== LLM T=$T $(basename $M8) pp=$pp tg=128 hark"
  $P /usr/bin/time -f "maxrss %M kB" ./hark bench llm --backend cpu --model $M8 -t $T -r 3 --pp $pp --tg 128 2>&1 | grep -E '^\| llama|^samples|maxrss'
  echo "== LLM T=$T $(basename $M8) pp=$pp tg=128 llama-bench"
  $P ./peers/bin/llama-bench -m $M8 -t $T -r 3 -p $pp -n 128 -o json | python3 -c '
import json,sys
for r in json.load(sys.stdin):
    t="pp%d"%r["n_prompt"] if r["n_prompt"] else "tg%d"%r["n_gen"]
    print("llama-bench %s t=%d mean %.2f samples t/s: %s"%(t,r["n_threads"],r["avg_ts"]," ".join("%.2f"%x for x in r["samples_ts"])))'
done
echo "== profiles at $(el) s"
HARK_CPUPROFILE=$OUT/tg-t16.pprof ./hark bench llm --backend cpu --model $M8 -t 16 -r 3 --pp 0 --tg 128 2>&1 | grep -E '^\| llama'
HARK_CPUPROFILE=$OUT/pp-t16.pprof ./hark bench llm --backend cpu --model $M8 -t 16 -r 2 --pp 512 --tg 0 2>&1 | grep -E '^\| llama'
fi
echo "== done at $(el) s"; } > $OUT/timed-$PART.log 2>&1
cp o/h.txt o/w.txt o/h.err o/w.err $OUT/ 2>/dev/null
cat $OUT/machine.log; tail -2 $OUT/build.log 2>/dev/null; cat $OUT/timed-$PART.log
