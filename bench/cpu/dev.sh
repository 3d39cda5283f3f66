#!/usr/bin/env bash
# The CPU measurement against whisper.cpp and llama.cpp (issue 12) on the 2-core dev machine, from the repository root:
#   bench/cpu/dev.sh PEERS OUT [whisper|llm|all] [BASE]
# BASE (a commit, optional): also runs that commit's Hark on the LLM rows, labelled base:FILE (an A/B of a change).
# PEERS: the output folder of `../shared/tools/peers/build-peers.sh build SRC PEERS --cpu` built on this machine. On
# the dev VM (KVM; /proc/cpuinfo lists amx_* but AMX instructions raise SIGILL) the peers' q8_0/q4_0 paths crash
# unless AMX is compiled out: the same cmake lines with -DCMAKE_C_FLAGS=/-DCMAKE_CXX_FLAGS="-mno-amx-tile
# -mno-amx-int8 -mno-amx-bf16" (everything else native).
# OUT: the log goes to OUT/dev.log; medians by bench/cpu/summarize.py (same log format as run.sh).
# Rules (issue 12): Hark and the peer alternate on the same file at the same thread count (2, all of this machine's
# cores); Whisper runs on the whole long-form file, and a run whose text (whitespace collapsed, timestamps dropped)
# differs from the kit reference's (openai-whisper: longform-nowords.json, beam 5: longform-beam5-nowords.json) is
# marked BAD and not counted. The machine must be otherwise idle.
set -u
PEERS=$(cd "$1" && pwd); O=$(mkdir -p "$2" && cd "$2" && pwd); PART=${3:-all}; BASE=${4:-}; T=2
DATA=${HARK_TESTDATA:-$(pwd)/../shared}; KIT=$DATA/whisper-kit; WAV=$DATA/audio/ljspeech-longform-LJ001-0021-0076.wav
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
exec > >(tee -a "$O/dev.log") 2>&1
echo "== machine (dev)"; date -u; uname -r; nproc; lscpu | grep -E 'Model name|Socket|Core|Thread|Hypervisor'
grep -o -w -E 'avx2|avx512f|avx512_vnni|avx512_bf16|amx_tile|amx_int8' /proc/cpuinfo | sort | uniq -c
ldconfig -p | grep -i openblas | head -3 || echo "no libopenblas.so.0: Hark uses its Go paths for f16/f32 GEMM"
echo "hark at $(git rev-parse HEAD)"; CGO_ENABLED=0 go build -trimpath -o "$W/hark" . || exit 1; sha256sum "$W/hark"
if [ -n "$BASE" ]; then
  mkdir "$W/base" && git archive "$BASE" | tar -x -C "$W/base" && (cd "$W/base" && CGO_ENABLED=0 go build -trimpath -o "$W/hark-base" .) || exit 1
  echo "base: $(git rev-parse "$BASE")"; sha256sum "$W/hark-base"
fi
for r in greedy beam5; do
  f=longform-nowords.json; [ $r = beam5 ] && f=longform-beam5-nowords.json
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["text"])' "$KIT/reference/longform/$f" > "$W/expected-$r.txt"
done
check() { python3 - "$1" "$2" <<'PY'
import re,sys
got=' '.join(re.sub(r'^\[[^]]*\]','',l) for l in open(sys.argv[1]).read().splitlines())
got=' '.join(got.split()); exp=' '.join(open(sys.argv[2]).read().split())
print('OK' if got==exp else 'BAD(%d vs %d chars; first diff at %d)'%(len(got),len(exp),next((i for i,(a,b) in enumerate(zip(got,exp)) if a!=b),min(len(got),len(exp)))))
PY
}
TIMEFORMAT=%R
whisper() { # NAME MODEL BEAM RUNS
  local exp=$W/expected-greedy.txt; [ "$3" = 5 ] && exp=$W/expected-beam5.txt
  echo "== Whisper $1 T=$T beam=$3 (whole long-form file, $(basename "$WAV"))"
  for r in $(seq "$4"); do
    t=$( { time "$W/hark" transcribe --model "$2" --beam "$3" --threads $T "$WAV" > "$W/h.txt" 2>"$W/h.err"; } 2>&1 )
    echo "RESULT $1 hark T=$T beam=$3 run=$r ${t}s $(check "$W/h.txt" "$exp")"
    t=$( { time "$PEERS/bin/whisper-cli" -m "$2" -f "$WAV" -t $T -bs "$3" -np > "$W/w.txt" 2>"$W/w.err"; } 2>&1 )
    echo "RESULT $1 whisper.cpp T=$T beam=$3 run=$r ${t}s $(check "$W/w.txt" "$exp")"
  done
}
llm() { # G
  echo "== LLM T=$T $(basename "$1") pp=512 tg=128 hark"
  "$W/hark" bench llm --model "$1" -t $T -r 5 --pp 512 --tg 128
  echo "== LLM T=$T $(basename "$1") pp=512 tg=128 llama-bench"
  "$PEERS/bin/llama-bench" -m "$1" -t $T -p 512 -n 128 -r 5 -o json | python3 -c '
import json,sys
for r in json.load(sys.stdin):
    t="pp%d"%r["n_prompt"] if r["n_prompt"] else "tg%d"%r["n_gen"]
    print("llama-bench %s t=%d mean %.2f samples t/s: %s"%(t,r["n_threads"],r["avg_ts"]," ".join("%.2f"%x for x in r["samples_ts"])))'
}
if [ "$PART" != whisper ]; then
  "$W/hark" bench llm --dir "$W/m" --type q8_0 --type q4_0 --pp 8 --tg 0 -r 1 -t $T >/dev/null || exit 1
  for q in q8_0 q4_0; do
    G=$W/m/smollm2-135m-shape-v1-L30-$q.gguf; llm "$G"
    if [ -n "$BASE" ]; then
      echo "== LLM T=$T base:$(basename "$G") pp=512 tg=128 hark-base"; "$W/hark-base" bench llm --model "$G" -t $T -r 5 --pp 512 --tg 128
    fi
  done
fi
if [ "$PART" != llm ]; then
  whisper q8_0 "$KIT/models/ggml-kit-tiny.en-q8_0.bin" 1 5
  whisper f16 "$KIT/models/ggml-kit-tiny.en-f16.bin" 1 5
  whisper f16 "$KIT/models/ggml-kit-tiny.en-f16.bin" 5 5
fi
echo "== done"; date -u
python3 bench/cpu/summarize.py "$O/dev.log"
