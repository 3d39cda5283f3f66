#!/bin/bash
# Issue #36 (branch dtw36), second call, on the machine call1.sh left warm (msltest.test and the first part of
# data.tar.xz in /w/dtw36, the driver's compute cache holding the branch's PTX): TestE2EWhisperJFK (not -short:
# greedy and beam 5, word timestamps) through CUDA in normal, permuted and poisoned runs side by side; then
# `hark transcribe --backend cuda --word-timestamps` of jfk.wav with main's hark (8c975b9, its cubins) and the
# branch's, alternating, three runs each, and once each without word timestamps, the words compared; the
# tracked 10-min passage (testdata/speechkit/passage.flac) with word timestamps, twice each, words compared; then
# `hark bench whisper --backend cuda -r 5` of the branch (its word alignment row: ms and host synchronizations a
# window). Run from the repository root: K=.gpu/dtw36/c2 bash .gpu/dtw36/c2/call2.sh, $K holding data.part2 (the
# rest of data.tar.xz), hark-main.xz and hark-dtw.xz.
set -u
K=${K:-.gpu/dtw36/c2}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
export HARK_CUDA_CUBIN_DIR=$PWD/cuda/cubin
PASSAGE=$PWD/testdata/speechkit/passage.flac
mkdir -p $OUT && cd /w/dtw36 && [ -s data.part1 ] && [ -x msltest.test ] || { echo "no /w/dtw36: the machine was not call1.sh's"; exit 3; }
mkdir -p shared && cat data.part1 $K/data.part2 | tar --strip-components=1 -C shared -xJf - || exit 3
W8=/w/dtw36/shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
JFK=/w/dtw36/shared/audio/jfk.wav
for b in hark-main hark-dtw; do xz -dc $K/$b.xz > $b && chmod +x $b; done
export HARK_TESTDATA=/w/dtw36/shared
T='^TestE2EWhisperJFK$'
run() { # mode env
  env $2 HARK_MSLTEST_DEVICE=cuda timeout 120 ./msltest.test -test.run "$T" -test.v -test.count=1 > $OUT/e2e-$1.v.log 2>&1
  echo "== msltest $1 ($2): exit $? at $(el) s"
}
run normal "" > $OUT/m-normal.txt &
run permuted HARK_CUDA_PERMUTE=20261130 > $OUT/m-permuted.txt &
run poison HARK_CUDA_POISON=1 > $OUT/m-poison.txt &
wait
for mode in normal permuted poison; do
  cat $OUT/m-$mode.txt
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|beams [15]:' $OUT/e2e-$mode.v.log | head -30
done
rm -f $OUT/m-*.txt
(cd $OUT && tar -czf call2-test-logs.tgz *.v.log && rm *.v.log)
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
      /usr/bin/time -f "$b transcribe --word-timestamps passage, run $r: %e s wall" ./$b transcribe --backend cuda --model $W8 --word-timestamps --format json $PASSAGE > $OUT/$b-x$r.json 2> $OUT/err.txt; tail -1 $OUT/err.txt
    done
  done
  python3 /tmp/cmpwords.py $OUT/hark-main-x1.json $OUT/hark-dtw-x1.json
  echo "== hark bench whisper --backend cuda -r 5 at $(el) s"
  ./hark-dtw bench whisper --backend cuda -r 5 --model $W8 --audio $JFK 2>&1
  echo "== done at $(el) s"; } > $OUT/call2-timed.log 2>&1
cp $OUT/hark-main-1.json $OUT/call2-jfk-main.json; cp $OUT/hark-dtw-1.json $OUT/call2-jfk-dtw.json
rm -f $OUT/err.txt $OUT/hark-*.json
cat $OUT/call2-timed.log
