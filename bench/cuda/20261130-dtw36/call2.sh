#!/bin/bash
# Issue #36 (branch dtw36), second call, on the machine call1.sh left warm (the kit model in /w/dtw36, the
# driver's compute cache holding the branch's PTX): `hark transcribe --backend cuda --word-timestamps` of jfk.wav
# with main's hark (8c975b9, its cubins) and the branch's, alternating, three runs each, and once each without
# word timestamps; the two JSON outputs' words compared; the 204.2-s excerpt with word timestamps, twice each;
# then `hark bench whisper --backend cuda -r 5` of the branch (its word alignment row: ms and host
# synchronizations a window). Run from the repository root:
# K=.gpu/dtw36 bash .gpu/dtw36/call2.sh, $K holding hark-main.xz, hark-dtw.xz and excerpt.flac (the first
# 204.2 s of the long-form file, `sox ljspeech-longform-LJ001-0021-0076.wav excerpt.flac trim 0 204.2`).
set -u
K=${K:-.gpu/dtw36}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
export HARK_CUDA_CUBIN_DIR=$PWD/cuda/cubin
mkdir -p $OUT && cd /w/dtw36 || { echo "no /w/dtw36: the machine was not call1.sh's"; exit 3; }
W8=/w/dtw36/shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
JFK=/w/dtw36/shared/audio/jfk.wav
[ -s $W8 ] || { echo "the kit model is missing: the machine was not call1.sh's"; exit 3; }
for b in hark-main hark-dtw; do xz -dc $K/$b.xz > $b && chmod +x $b; done
{ for b in hark-dtw hark-main; do # warm-up (the branch's PTX from the driver's cache)
    /usr/bin/time -f "$b warm-up: %e s wall" ./$b transcribe --backend cuda --model $W8 --word-timestamps --format json $JFK > /dev/null 2> $OUT/err.txt; tail -1 $OUT/err.txt
  done
  for r in 1 2 3; do
    for b in hark-main hark-dtw; do
      /usr/bin/time -f "$b transcribe --word-timestamps jfk, run $r: %e s wall" ./$b transcribe --backend cuda --model $W8 --word-timestamps --format json $JFK > $OUT/$b-$r.json 2> $OUT/err.txt; tail -1 $OUT/err.txt
    done
  done
  for b in hark-main hark-dtw; do
    /usr/bin/time -f "$b transcribe (no words) jfk: %e s wall" ./$b transcribe --backend cuda --model $W8 --format json $JFK > /dev/null 2> $OUT/err.txt; tail -1 $OUT/err.txt
  done
  cat > /tmp/cmpwords.py <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
wa = [w for s in a["segments"] for w in s.get("words") or []]
wb = [w for s in b["segments"] for w in s.get("words") or []]
same = [(x["word"], x["start"], x["end"]) for x in wa] == [(x["word"], x["start"], x["end"]) for x in wb]
print("words and times, main against the branch:", "the same" if same else "DIFFERENT", f"({len(wa)} and {len(wb)} words)")
if len(wa) == len(wb):
    print("largest word probability difference: %.3g" % max(abs(x["probability"] - y["probability"]) for x, y in zip(wa, wb)))
diff = [(x["word"], x["start"], x["end"], y["word"], y["start"], y["end"]) for x, y in zip(wa, wb) if (x["word"], x["start"], x["end"]) != (y["word"], y["start"], y["end"])]
for d in diff[:20]:
    print("main %r %.2f-%.2f | branch %r %.2f-%.2f" % d)
PY
  python3 /tmp/cmpwords.py $OUT/hark-main-1.json $OUT/hark-dtw-1.json
  for r in 1 2; do
    for b in hark-main hark-dtw; do
      /usr/bin/time -f "$b transcribe --word-timestamps excerpt, run $r: %e s wall" ./$b transcribe --backend cuda --model $W8 --word-timestamps --format json $K/excerpt.flac > $OUT/$b-x$r.json 2> $OUT/err.txt; tail -1 $OUT/err.txt
    done
  done
  python3 /tmp/cmpwords.py $OUT/hark-main-x1.json $OUT/hark-dtw-x1.json
  echo "== hark bench whisper --backend cuda -r 5 at $(el) s"
  ./hark-dtw bench whisper --backend cuda -r 5 --model $W8 --audio $JFK 2>&1
  echo "== done at $(el) s"; } > $OUT/call2-timed.log 2>&1
cp $OUT/hark-main-1.json $OUT/call2-jfk-main.json; cp $OUT/hark-dtw-1.json $OUT/call2-jfk-dtw.json
rm -f $OUT/err.txt $OUT/hark-*.json
cat $OUT/call2-timed.log
