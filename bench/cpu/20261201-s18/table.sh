#!/bin/bash
# Issue #37, eighteenth session, lead's final table (2026-12-01): the merged main's Hark against whisper.cpp and
# llama.cpp built in the same call on the device machine's 16-core CPU, one warm machine, two calls:
#   table.sh llm      carry ($K): hark.xz (bench/cpu/build-hark.sh of the measured commit), peers-cpu.tar.xz
#                     (build-peers.sh prepare's trees of whisper.cpp 233fe1fc9 and the llama.cpp fork ae1a0b1c7, other
#                     ggml backends and CPU architectures dropped), build-peers.sh, smollm2.tar.xz (the tokenizer
#                     hark bench llm writes into its GGUF), model.xz.00 (first of three parts of the kit q8_0 model, reordered
#                     by q8split.py, xz, split -n 3). Builds both peers (--cpu), runs the LLM rows.
#   table.sh whisper  carry: model.xz.01, model.xz.02, q8split.py, excerpt.flac (the long-form file cut at 204.2 s),
#                     excerpt-expected.txt (the kit reference's text of the segments starting before 204.2 s).
#                     Joins the model, runs the Whisper rows with the llm part's Hark and whisper.cpp.
# Rules (issue 12/37): Hark and the peer alternate on the same file at the same thread count; rows below 16 threads
# are pinned to the first T CPUs with taskset (both tools). Whisper: wall time of each process, greedy, a run whose
# text (whitespace collapsed) differs from the kit reference's is marked BAD. LLM: SmolLM2-135M-shaped q8_0,
# `-r 3` each, two rounds.
set -u
PART=$1
K=${K:-.gpu/s18c}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/s18c
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/o && cp -n $K/* $W/ 2>/dev/null; cd $W
{ echo "== machine"; date -u; uname -r; nproc; lscpu | grep -E 'Model name|Socket|Core|Thread|NUMA node0|Hypervisor'
  grep -o -w -E 'avx2|avx512f|avx512_vnni|avx512_bf16|amx_tile|amx_int8' /proc/cpuinfo | sort | uniq -c
  ldconfig -p | grep -i -E 'openblas|libblas' | head -3; cat /proc/loadavg; } > $OUT/machine-$PART.log 2>&1
pin() { [ "$1" -ge 16 ] || echo "taskset -c 0-$(( $1 - 1 ))"; }
TIMEFORMAT=%R
M8=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
if [ $PART = llm ]; then
  xz -dc hark.xz > hark && chmod +x hark && tar -xJf peers-cpu.tar.xz && tar -xJf smollm2.tar.xz
  sha256sum hark >> $OUT/machine-$PART.log
  ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $W/smollm2 --pp 8 --tg 0 -r 1 -t 4 > $OUT/write.log 2>&1
  bash build-peers.sh build $W $W/peers --cpu > $OUT/build.log 2>&1; echo "build exit $? at $(el) s" >> $OUT/build.log
  { echo "== timed (llm) at $(el) s; $(cat /proc/loadavg)"
  for round in 1 2; do for T in 16 2 8 4; do P=$(pin $T)
    echo "== round $round LLM T=$T hark"
    $P ./hark bench llm --backend cpu --model $M8 -t $T -r 3 --pp 512 --tg 128 2>&1 | grep -E '^\| llama|^samples'
    echo "== round $round LLM T=$T llama-bench"
    $P ./peers/bin/llama-bench -m $M8 -t $T -r 3 -p 512 -n 128 -o json | python3 -c '
import json,sys
for r in json.load(sys.stdin):
    t="pp%d"%r["n_prompt"] if r["n_prompt"] else "tg%d"%r["n_gen"]
    print("llama-bench %s t=%d mean %.2f samples t/s: %s"%(t,r["n_threads"],r["avg_ts"]," ".join("%.2f"%x for x in r["samples_ts"])))'
  done; done
  echo "== done at $(el) s"; } > $OUT/timed-llm.log 2>&1
else
  [ -x hark ] && [ -x peers/bin/whisper-cli ] || { echo "no Hark or whisper.cpp left by the llm part on this machine"; exit 3; }
  [ -e q8.bin ] || { cat model.xz.0? | xz -dc > q8s.bin && python3 q8split.py join q8s.bin q8.bin && rm q8s.bin; }
  sha256sum q8.bin excerpt.flac >> $OUT/machine-$PART.log
  check() { python3 - "$1" excerpt-expected.txt <<'PY'
import re,sys
got=' '.join(re.sub(r'^\[[^]]*\]','',l) for l in open(sys.argv[1]).read().splitlines())
got=' '.join(got.split()); exp=' '.join(open(sys.argv[2]).read().split())
print('OK' if got==exp else 'BAD(%d vs %d chars; first diff at %d)'%(len(got),len(exp),next((i for i,(a,b) in enumerate(zip(got,exp)) if a!=b),min(len(got),len(exp)))))
PY
  }
  { echo "== timed (whisper) at $(el) s; $(cat /proc/loadavg)"
  for T in 16 8 4 2; do P=$(pin $T)
    for r in 1 2; do
      t=$( { time $P ./hark transcribe --backend cpu --model q8.bin --beam 1 --threads $T --format txt excerpt.flac > o/h.txt 2>o/h.err; } 2>&1 ); echo "RESULT q8_0 hark T=$T beam=1 run=$r ${t}s $(check o/h.txt)"
      t=$( { time $P ./peers/bin/whisper-cli -m q8.bin -f excerpt.flac -t $T -bs 1 -np -nt > o/w.txt 2>o/w.err; } 2>&1 ); echo "RESULT q8_0 whisper.cpp T=$T beam=1 run=$r ${t}s $(check o/w.txt)"
    done
  done
  echo "== done at $(el) s"; } > $OUT/timed-whisper.log 2>&1
  cp o/h.txt $OUT/whisper-h.txt; cp o/w.txt $OUT/whisper-w.txt
fi
cat $OUT/machine-$PART.log; tail -2 $OUT/build.log 2>/dev/null; cat $OUT/timed-$PART.log
