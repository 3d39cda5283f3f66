#!/bin/bash
# Final check, call 4 (call 1's machine): timings of the merged main's hark (-tags hark_nocubin, reading call 1's
# cubins through HARK_CUDA_CUBIN_DIR; the inflated cubins are cached after the first process either way) against
# whisper.cpp built in call 1, kit q8_0: the 204.2-s excerpt end to end, greedy and beam 5, the two programs
# alternating, 3 runs each (issue #36's rows); `hark bench whisper` (encoder, decoder, greedy and beam windows with
# their waits); jfk with word timestamps (issue #36's alignment on the device) on CUDA and the CPU; pp512 and tg128 of
# the SmolLM2 shape (issue #35's rows, #34's launches). $K holds hark.xz.
set -u
K=${K:-.gpu/f4}; K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/f
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT; cd $W && [ -x pc/bin/whisper-cli ] && [ -s excerpt.wav ] || { echo "no whisper-cli or excerpt: not calls 1-3's machine"; exit 3; }
xz -dc $K/hark.xz > hark && chmod +x hark
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$W/cubin
W8=$W/shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin; JFK=$W/shared/audio/jfk.wav; WC=$W/pc/bin/whisper-cli
TIMEFORMAT=%R
{ echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(./hark --version 2>&1 | head -3 | tr '\n' ' ')"
  ./hark transcribe --backend cuda --model $W8 $JFK > /dev/null 2>&1  # warm: caches the cubins
  $WC -m $W8 -f $JFK -t 8 -l en -bs 1 -np -nt > /dev/null 2>&1
  for r in 1 2 3; do for bm in 1 5; do
    t=$( { time ./hark transcribe --backend cuda --model $W8 --beam $bm excerpt.wav > h-$bm.txt 2>h-$bm.err; } 2>&1 ); echo "RESULT hark cuda beam=$bm run=$r ${t}s words=$(wc -w < h-$bm.txt)"
    t=$( { time $WC -m $W8 -f excerpt.wav -t 8 -l en -bs $bm -np -nt > w-$bm.txt 2>w-$bm.err; } 2>&1 ); echo "RESULT whisper.cpp cuda beam=$bm run=$r ${t}s words=$(wc -w < w-$bm.txt)"
  done; done
  for bm in 1 5; do echo "-- beam $bm: words differing (hark against whisper.cpp, case and punctuation folded):"; diff <(tr -s ' \n' '\n\n' < h-$bm.txt | tr -d '[:punct:]' | tr A-Z a-z) <(tr -s ' \n' '\n\n' < w-$bm.txt | tr -d '[:punct:]' | tr A-Z a-z) | grep -c '^[<>]'; done
  echo "-- whisper.cpp's own timings (beam 1)"; $WC -m $W8 -f excerpt.wav -t 8 -l en -bs 1 -np 2>&1 >/dev/null | grep -E "encode time|decode time|batchd time|total time"
} > $OUT/excerpt.log 2>&1
{ echo "== bench whisper at $(el) s"; ./hark bench whisper --backend cuda -r 5 --model $W8 --audio $JFK 2>&1
  echo "== bench whisper --beam 5 at $(el) s"; ./hark bench whisper --backend cuda -r 5 --beam 5 --model $W8 --audio $JFK 2>&1 | grep -vE '^samples'
  for be in cuda cpu; do /usr/bin/time -f "$be jfk words: %e s" ./hark transcribe --backend $be --model $W8 --word-timestamps --format json $JFK > jfk-$be.json 2> err.txt; tail -1 err.txt; done
  cmp jfk-cuda.json jfk-cpu.json && echo "jfk with word timestamps: CUDA's JSON equals the CPU's"; head -c 600 jfk-cuda.json; echo
  echo "== the speechkit passage (10 min) greedy with word timestamps, CUDA and the CPU, at $(el) s"
  for be in cuda cpu; do /usr/bin/time -f "$be passage words: %e s" ./hark transcribe --backend $be --beam 1 --model $W8 --word-timestamps --format json $R/testdata/speechkit/passage.flac > passage-$be.json 2> err.txt; tail -1 err.txt; done
  python3 - passage-cuda.json passage-cpu.json <<'PY'
import json, sys
def words(p):
    out = []
    def walk(o):
        if isinstance(o, dict):
            if "word" in o and "start" in o:
                out.append((o["word"], o["start"], o.get("end")))
            for v in o.values(): walk(v)
        elif isinstance(o, list):
            for v in o: walk(v)
    walk(json.load(open(p)))
    return out
g, c = words(sys.argv[1]), words(sys.argv[2])
same = sum(1 for a, b in zip(g, c) if a == b)
first = next((i for i, (a, b) in enumerate(zip(g, c)) if a != b), None)
print("passage words: cuda %d, cpu %d, identical (word, start, end) %d; first difference at %s" % (len(g), len(c), same, first))
if first is not None: print("  cuda", g[first:first+3], "\n  cpu ", c[first:first+3])
PY
} > $OUT/bench.log 2>&1
{ echo "== LLM at $(el) s"; TOK=$W/shared/llm-kit/tokenizers/smollm2; mkdir -p m
  ./hark bench llm --backend cpu --dir m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /dev/null 2>&1; ls m
  for f in q8_0 q4_0 f16; do ./hark bench llm --backend cuda --model m/smollm2-135m-shape-v1-L30-$f.gguf -r 5 --pp 512 --tg 128 2>&1 | grep -E '^\| smol|^\| .*(pp512|tg128)'; done
  echo "== launches a token, graphs off (q8_0)"; HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model m/smollm2-135m-shape-v1-L30-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -E 'cuda tg128'
  echo "== done at $(el) s"; } > $OUT/llm.log 2>&1
cat $OUT/excerpt.log $OUT/bench.log $OUT/llm.log
