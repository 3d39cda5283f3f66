#!/usr/bin/env bash
# The CPU measurement against whisper.cpp and llama.cpp (issue 12) on the device machine, from the repository root:
#   bench/cpu/run.sh whisper|llm DIR OUT LIMIT
# Two parts, one device call each (the repository that travels with every call leaves under 31 MB for the rest, and
# the kit model and the excerpt alone take 24 MB; run the llm part first, then the whisper part on the same machine
# while it is warm: the whisper part then reuses the llm part's Hark binary and need not carry it). DIR holds hark.xz
# (the measured commit, built as prep.sh says; optional for the whisper part), build-peers.sh, summarize.py and
#   whisper: model.xz (the kit's ggml-kit-tiny.en-q8_0.bin reordered by q8split.py split, which compresses better;
#            joined back here and its SHA-256 logged: the kit's is 75a856360437cbcb...), q8split.py, excerpt.flac (the
#            long-form file cut at 204.2 s: sox FILE excerpt.wav trim 0 204.2), excerpt-expected.txt (the kit
#            reference's text of the segments starting before 204.2 s), peers-w.tar.xz (whisper.cpp's tree from build-peers.sh prepare, less what a CPU build on
#            x86-64 never compiles: other backends, other CPU architectures, examples that need SDL2 or other platforms);
#   llm:     peers-l.tar.xz (the llama.cpp tree likewise, its vendored miniaudio and stb dropped; and peers-w.tar.xz,
#            built after the rows when time is left, for a whisper part on the same machine), smollm2.tar.xz (the
#            SmolLM2 tokenizer files hark bench llm writes into its GGUFs), cpu.test.xz (go test -c ./engine/cpu, for
#            BenchmarkDecodeBarriers).
# Rules (issue 12): Hark and the peer alternate on the same file at the same thread count; rows below 16 threads are
# pinned to the first T CPUs with taskset (both tools). Whisper: wall time of each process, a run whose text
# (whitespace collapsed) differs from the kit's is marked BAD and not counted. LLM: one `-r 5` invocation of each
# tool, every repetition's tok/s logged (Hark on stderr, llama-bench in its JSON). Items run in priority order;
# none starts if its estimated time would pass LIMIT seconds from the start (it is logged as skipped). The log goes
# to OUT/run-PART.log.
set -u
PART=$1; D=$(cd "$2" && pwd); O=$3; LIMIT=$4; START=$(date +%s); W=/tmp/w; mkdir -p $W/out $W/m
exec > >(tee -a "$O/run-$PART.log") 2>&1
left() { echo $(( LIMIT - ($(date +%s) - START) )); }
fits() { [ "$(left)" -ge "$1" ] || { echo "== SKIPPED $2: needs ~$1 s, $(left) s left"; return 1; }; }
echo "== machine ($PART)"; date -u; uname -r; nproc; lscpu | grep -E 'Model name|Socket|Core|Thread|NUMA node0|Hypervisor'
grep -o -w -E 'avx2|avx512f|avx512_vnni|avx512_bf16|amx_tile|amx_int8' /proc/cpuinfo | sort | uniq -c
ldconfig -p | grep -i openblas | head -3
if [ -f "$D/hark.xz" ]; then xz -dc "$D/hark.xz" > $W/hark && chmod +x $W/hark
else [ -x $W/hark ] || { echo "no hark.xz, and no Hark binary left by an llm part on this machine"; exit 1; }; fi
sha256sum $W/hark
s=$(date +%s)
if [ $PART = whisper ]; then
  xz -dc "$D/model.xz" > $W/q8s.bin && python3 "$D/q8split.py" join $W/q8s.bin $W/q8.bin && cp "$D/excerpt.flac" $W/ && tar -C $W -xJf "$D/peers-w.tar.xz" && sha256sum $W/q8.bin
  # the llm part, run first on the same machine, may have built it already
  [ -x $W/peers/bin/whisper-cli ] || bash "$D/build-peers.sh" build $W/peersrc $W/peers --cpu whisper || { echo "whisper.cpp build failed"; exit 1; }
else
  xz -dc "$D/cpu.test.xz" > $W/cpu.test && chmod +x $W/cpu.test && tar -C $W -xJf "$D/peers-l.tar.xz" && tar -C $W -xJf "$D/smollm2.tar.xz"
  bash "$D/build-peers.sh" build $W/peersrc $W/peers --cpu llama > $W/bl.log 2>&1 & bl=$!
  $W/hark bench llm --backend cpu --dir $W/m --type q8_0 --type q4_0 --tokenizer $W/smollm2 --pp 8 --tg 0 -r 1 -t 4 >/dev/null
  wait $bl || { cat $W/bl.log; echo "llama.cpp build failed"; exit 1; }
  tail -1 $W/bl.log
fi
echo "peers built in $(( $(date +%s) - s )) s"
Q8=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf; Q4=$W/m/smollm2-135m-shape-v1-L30-q4_0.gguf
pin() { [ "$1" -ge 16 ] || echo "taskset -c $(python3 -c "import os,sys;print(','.join(map(str,sorted(os.sched_getaffinity(0))[:int(sys.argv[1])])))" "$1")"; }
llm() { # T G PP TG
  local P; P=$(pin $1)
  echo "== LLM T=$1 $(basename $2) pp=$3 tg=$4 hark $P"
  $P $W/hark bench llm --backend cpu --model $2 -t $1 -r 5 --pp $3 --tg $4
  echo "== LLM T=$1 $(basename $2) pp=$3 tg=$4 llama-bench $P"
  $P $W/peers/bin/llama-bench -m $2 -t $1 -p $3 -n $4 -r 5 -o json | python3 -c '
import json,sys
for r in json.load(sys.stdin):
    t="pp%d"%r["n_prompt"] if r["n_prompt"] else "tg%d"%r["n_gen"]
    print("llama-bench %s t=%d mean %.2f samples t/s: %s"%(t,r["n_threads"],r["avg_ts"]," ".join("%.2f"%x for x in r["samples_ts"])))'
}
check() { python3 - "$1" "$D/excerpt-expected.txt" <<'PY'
import re,sys
got=' '.join(re.sub(r'^\[[^]]*\]','',l) for l in open(sys.argv[1]).read().splitlines())
got=' '.join(got.split()); exp=' '.join(open(sys.argv[2]).read().split())
print('OK' if got==exp else 'BAD(%d vs %d chars; first diff at %d)'%(len(got),len(exp),next((i for i,(a,b) in enumerate(zip(got,exp)) if a!=b),min(len(got),len(exp)))))
PY
}
TIMEFORMAT=%R
whisper() { # NAME MODEL T BEAM RUNS
  local P; P=$(pin $3)
  echo "== Whisper $1 T=$3 beam=$4 $P"
  for r in $(seq $5); do
    t=$( { time $P $W/hark transcribe --backend cpu --model $2 --beam $4 --threads $3 $W/excerpt.flac > $W/out/h.txt 2>$W/out/h.err; } 2>&1 )
    echo "RESULT $1 hark T=$3 beam=$4 run=$r ${t}s $(check $W/out/h.txt)"
    t=$( { time $P $W/peers/bin/whisper-cli -m $2 -f $W/excerpt.flac -t $3 -bs $4 -np > $W/out/w.txt 2>$W/out/w.err; } 2>&1 )
    echo "RESULT $1 whisper.cpp T=$3 beam=$4 run=$r ${t}s $(check $W/out/w.txt)"
  done
}
# Priority (issue 12's brief): the scaling table (Whisper q8_0 and LLM q8_0 decode at 1, 2, 4, 8, 16 threads), the
# LLM rows, Whisper f16 (not run: its model does not travel), beam 5. The 2- and 16-thread q8_0 LLM rows serve the
# scaling table too.
if [ $PART = llm ]; then
  fits 35 "LLM 2 threads q8_0" && llm 2 $Q8 512 128
  fits 15 "LLM 16 threads q8_0" && llm 16 $Q8 512 128
  if fits 20 "pool barriers A/B"; then # item 1 of issue 12: same binary, barrier after every dispatch vs fences
    echo "== BenchmarkDecodeBarriers (engine/cpu test binary), 16 and 2 (pinned) threads"
    $W/cpu.test -test.run '^$' -test.bench DecodeBarriers -test.benchtime 200x -test.cpu 16
    taskset -c 0,1 $W/cpu.test -test.run '^$' -test.bench DecodeBarriers -test.benchtime 50x -test.cpu 2
  fi
  for T in 8 4 1; do fits $(( T == 1 ? 30 : 15 )) "LLM tg T=$T" && llm $T $Q8 0 128; done
  fits 25 "LLM 2 threads q4_0" && llm 2 $Q4 512 128
  if [ -f "$D/peers-w.tar.xz" ] && fits 25 "whisper.cpp build for the whisper part"; then # measures nothing: after the rows
    tar -C $W -xJf "$D/peers-w.tar.xz" && bash "$D/build-peers.sh" build $W/peersrc $W/peers --cpu whisper
  fi
else
  fits 45 "Whisper q8_0 16 threads" && whisper q8_0 $W/q8.bin 16 1 5
  fits 85 "Whisper q8_0 2 threads" && whisper q8_0 $W/q8.bin 2 1 5
  fits 30 "Whisper q8_0 8 threads" && whisper q8_0 $W/q8.bin 8 1 3
  fits 45 "Whisper q8_0 4 threads" && whisper q8_0 $W/q8.bin 4 1 3
  fits 85 "Whisper q8_0 1 thread" && whisper q8_0 $W/q8.bin 1 1 3
  fits 100 "Whisper q8_0 beam 5 2 threads" && whisper q8_0 $W/q8.bin 2 5 3
fi
cp $W/out/h.txt $W/out/w.txt "$O/" 2>/dev/null
echo "== done after $(( $(date +%s) - START )) s"; date -u
python3 "$D/summarize.py" "$O/run-$PART.log"
