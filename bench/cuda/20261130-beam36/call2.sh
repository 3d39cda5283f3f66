#!/bin/bash
# Issue #36 (branch beam36), second call, on the machine call1.sh left warm (the kit model and data in /w/b36, the
# driver's cache holding the PTX main b7807e0 and this branch share): `hark bench whisper --backend cuda` with a
# beam-5 window row (syncs and read-backs a token, Backend.Stats), at 16 and 32 greedy tokens a read-back, and
# the beam window's GPU time per kernel; then the
# 204.2-s excerpt end to end, `hark transcribe --backend cuda`, hark0 (main b7807e0) and hark alternating, 3 runs
# each, greedy then beam 5, then hark's greedy at --chain-tokens 32; the CPU's beam-5 and greedy text of the excerpt;
# last, msltest's TestE2EWhisperLongForm/beams5 through CUDA (the whole long-form file). The excerpt and the
# long-form WAV are made here by `trim` (a 30-line Go program over hark's audio package, byte-identical to
# `sox FILE OUT trim 0 204.2` and to the shared WAV) from longform.flac. $K holds hark.xz, hark0.xz, trim.xz and
# longform.flac.
set -u
K=${K:-.gpu/beam36}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT && cd /w/b36 2>/dev/null || { echo "no /w/b36: not call1.sh's machine"; exit 3; }
export HARK_TESTDATA=/w/b36/shared
W8=/w/b36/shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
[ -s $W8 ] && [ -x msltest.test ] || { echo "the kit model or msltest.test is missing"; exit 3; }
for b in hark hark0 trim; do xz -dc $K/$b.xz > $b && chmod +x $b; done
./trim $K/longform.flac shared/audio/ljspeech-longform-LJ001-0021-0076.wav 100000
./trim $K/longform.flac excerpt.wav 204.2
echo "unpacked at $(el) s"
{ echo "== hark bench whisper --backend cuda -r 5 --beam 5 at $(el) s"
  ./hark bench whisper --backend cuda -r 5 --beam 5 --model $W8 --audio shared/audio/jfk.wav 2>&1
  echo "== the same, 32 tokens a read-back at $(el) s"
  ./hark bench whisper --backend cuda -r 5 --chain-tokens 32 --model $W8 --audio shared/audio/jfk.wav 2>&1 | grep -E 'greedy'
  echo "== GPU time per kernel of the beam window (HARK_CUDA_PROFILE=1, -r 1) at $(el) s"
  HARK_CUDA_PROFILE=1 ./hark bench whisper --backend cuda -r 1 --beam 5 --model $W8 --audio shared/audio/jfk.wav 2>&1 | grep -A16 'cuda beam 5 window'
  for beam in 1 5; do
    for r in 1 2 3; do
      for h in hark0 hark; do
        /usr/bin/time -f "$h transcribe --backend cuda --beam $beam excerpt, run $r: %e s wall" ./$h transcribe --backend cuda --model $W8 --beam $beam excerpt.wav > $OUT/ex-$h-b$beam-$r.txt 2> err.txt
        tail -1 err.txt
      done
    done
  done
  for r in 1 2 3; do
    /usr/bin/time -f "hark transcribe --backend cuda --beam 1 --chain-tokens 32 excerpt, run $r: %e s wall" ./hark transcribe --backend cuda --model $W8 --beam 1 --chain-tokens 32 excerpt.wav > $OUT/ex-hark32-$r.txt 2> err.txt
    tail -1 err.txt
  done
  for beam in 5 1; do
    /usr/bin/time -f "hark transcribe --backend cpu --beam $beam excerpt: %e s wall" ./hark transcribe --backend cpu --model $W8 --beam $beam excerpt.wav > $OUT/ex-cpu-b$beam.txt 2> err.txt
    tail -1 err.txt
  done
  cd $OUT
  for beam in 1 5; do
    for f in ex-hark*-b$beam-*.txt; do cmp -s $f ex-hark-b$beam-1.txt || echo "$f differs from ex-hark-b$beam-1.txt"; done
    cmp -s ex-hark-b$beam-1.txt ex-cpu-b$beam.txt && echo "beam $beam: CUDA and CPU print the same text" || diff <(tr ' ' '\n' < ex-cpu-b$beam.txt) <(tr ' ' '\n' < ex-hark-b$beam-1.txt) | head -20
    cmp -s ex-hark-b$beam-1.txt ex-hark0-b$beam-1.txt && echo "beam $beam: hark and hark0 print the same text"
    wc -w ex-hark-b$beam-1.txt
  done
  for r in 1 2 3; do cmp -s ex-hark32-$r.txt ex-hark-b1-1.txt && echo "chain 32 run $r: same text as 16"; done
  tar -czf call2-texts.tgz ex-*.txt && rm -f ex-*.txt
  cd /w/b36
  if [ "${LF_TIMEOUT:-150}" -gt 0 ]; then # LF_TIMEOUT=0: left out (the device budget)
    echo "== msltest TestE2EWhisperLongForm/beams5 (CUDA, timeout ${LF_TIMEOUT:-150} s) at $(el) s"
    HARK_MSLTEST_DEVICE=cuda timeout ${LF_TIMEOUT:-150} ./msltest.test -test.run '^TestE2EWhisperLongForm$/^beams5$' -test.v -test.count=1 > $OUT/longform.v.log 2>&1
    echo "exit $?"; grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|beams 5' $OUT/longform.v.log | head -20
  fi
  echo "== done at $(el) s"; } > $OUT/call2-timed.log 2>&1
cat $OUT/call2-timed.log
