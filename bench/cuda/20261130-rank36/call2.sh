#!/bin/bash
# Issue #36 (branch rank36), second call, on the machine call1.sh left warm (the kit model and jfk in /w/r36, the
# driver's cache holding the branch's base PTX): `hark bench whisper --backend cuda -r 5 --beam 5` of hark0 (main
# 8c975b9: the host ranks each step's candidates) and hark (the search chained on the device) at the default and at
# 8 and 16 steps a read-back; jfk's beam-5 text of both; then, while the call's time allows, the 204.2-s excerpt
# (sox trim 0 204.2 of the long-form WAV) end to end at beam 5, hark0 and hark alternating. $K holds hark.xz,
# hark0.xz (both -tags hark_nocubin: cuda/cubin of the checkout serve main's PTX) and excerpt.wav.xz.
set -u
K=${K:-.gpu/rank36}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
export HARK_CUDA_CUBIN_DIR=$PWD/cuda/cubin
mkdir -p $OUT && cd /w/r36 2>/dev/null || { echo "no /w/r36: not call1.sh's machine"; exit 3; }
W8=/w/r36/shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin; JFK=/w/r36/shared/audio/jfk.wav
[ -s $W8 ] || { echo "the kit model is missing"; exit 3; }
for b in hark hark0; do xz -dc $K/$b.xz > $b && chmod +x $b; done
xz -dc $K/excerpt.wav.xz > excerpt.wav
echo "unpacked at $(el) s"
{ echo "== hark0 bench whisper --backend cuda -r 5 --beam 5 at $(el) s"
  ./hark0 bench whisper --backend cuda -r 5 --beam 5 --model $W8 --audio $JFK 2>&1
  echo "== hark bench whisper --backend cuda -r 5 --beam 5 at $(el) s"
  ./hark bench whisper --backend cuda -r 5 --beam 5 --model $W8 --audio $JFK 2>&1
  for n in 8 16; do
    echo "== hark, --chain-tokens $n at $(el) s"
    ./hark bench whisper --backend cuda -r 5 --beam 5 --chain-tokens $n --model $W8 --audio $JFK 2>&1 | grep -E -A3 'window'
  done
  for h in hark0 hark; do ./$h transcribe --backend cuda --model $W8 --beam 5 $JFK > $OUT/jfk-$h.txt 2>/dev/null; done
  cmp -s $OUT/jfk-hark.txt $OUT/jfk-hark0.txt && echo "jfk beam 5: hark and hark0 print the same text" || diff $OUT/jfk-hark0.txt $OUT/jfk-hark.txt
  for r in 1 2; do
    for h in "hark0" "hark" "hark --chain-tokens 8"; do
      [ $(el) -lt ${LIMIT:-45} ] || { echo "(excerpt run $r of $h left out at $(el) s)"; continue; }
      t=$(echo $h | tr -d ' -'); /usr/bin/time -f "$h transcribe --backend cuda --beam 5 excerpt, run $r: %e s wall" ./$h transcribe --backend cuda --model $W8 --beam 5 excerpt.wav > $OUT/ex-$t-$r.txt 2> err.txt
      tail -1 err.txt
    done
  done
  cd $OUT; for f in ex-*.txt; do cmp -s $f ex-hark0-1.txt || echo "$f differs from ex-hark0-1.txt"; done; wc -w ex-hark0-1.txt 2>/dev/null
  tar -czf call2-texts.tgz ex-*.txt jfk-*.txt 2>/dev/null && rm -f ex-*.txt jfk-*.txt
  echo "== done at $(el) s"; } > $OUT/call2-timed.log 2>&1
cat $OUT/call2-timed.log
