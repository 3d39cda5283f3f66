#!/bin/bash
# Issue #37, twenty-fifth session, wh37: Whisper's 2 -> 16-thread scaling on the device's 16-core CPU, one warm
# machine, two calls back to back:
#   call.sh setup   carry .gpu/wh37/c1: model.xz (the kit q8_0 model reordered by q8split.py, xz), q8split.py,
#                   excerpt.flac (the long-form file cut at 204.2 s), excerpt-expected.txt (the kit reference's text of
#                   the segments starting before 204.2 s). Joins the model into /w/wh37.
#   call.sh run     carry .gpu/wh37/c2 (hark-main.xz: bench/cpu/build-hark.sh of main 6f24a63; peers-w.tar.xz:
#                   whisper.cpp 233fe1fc9's tree, other ggml backends and CPU architectures dropped) and .gpu/wh37/c3
#                   (hark-new.xz: build-hark.sh of wh37). Hark main and new alternate, 2 rounds at 16 and at 2
#                   threads (2 pinned to CPUs 0-1 with taskset), HARK_TIMINGS=1 on every run (its phases: backend and
#                   model load, the spectrogram and how long the transcription waited for it, the file); then
#                   `hark bench whisper` (encoder ms a window, decoder ms a token, greedy window ms a token) of both
#                   at 16 and 2 threads, one 16-thread CPU profile of new; then whisper.cpp built here (--cpu) and
#                   run at 16 and 2 threads while the time allows (LIMIT s from the start).
# Wall time of each process (bash time); a text that differs from the kit reference's (whitespace collapsed) is BAD.
set -u
PART=$1; R=$(pwd); W=/w/wh37; OUT=${OUT:-/tmp/out}; S=$(date +%s); LIMIT=${LIMIT:-170}
el() { echo $(( $(date +%s) - S )); }
mkdir -p $W/o $OUT && cd $W
if [ $PART = setup ]; then
  cp $R/.gpu/wh37/c1/* . || exit 3
  xz -dc model.xz > q8s.bin && python3 q8split.py join q8s.bin q8.bin && rm q8s.bin model.xz
  { date -u; nproc; lscpu | grep -E 'Model name|Socket|Core|Thread|Hypervisor'; cat /proc/loadavg; sha256sum q8.bin excerpt.flac; } | tee $OUT/setup.log
  exit 0
fi
cp $R/.gpu/wh37/c2/* $R/.gpu/wh37/c3/* . && xz -dc hark-main.xz > main && xz -dc hark-new.xz > new && chmod +x main new || exit 3
[ -e q8.bin ] || { echo "no model: the setup call's machine is gone"; exit 4; }
check() { python3 - "$1" excerpt-expected.txt <<'PY'
import re,sys
got=' '.join(re.sub(r'^\[[^]]*\]','',l) for l in open(sys.argv[1]).read().splitlines())
got=' '.join(got.split()); exp=' '.join(open(sys.argv[2]).read().split())
print('OK' if got==exp else 'BAD(%d vs %d chars; first diff at %d)'%(len(got),len(exp),next((i for i,(a,b) in enumerate(zip(got,exp)) if a!=b),min(len(got),len(exp)))))
PY
}
pin() { [ "$1" -ge 16 ] || echo "taskset -c 0-$(( $1 - 1 ))"; }
TIMEFORMAT=%R
{ echo "== machine"; date -u; nproc; lscpu | grep -E 'Model name|Hypervisor'; cat /proc/loadavg; sha256sum main new q8.bin excerpt.flac
  echo "== transcribe at $(el) s"
  for r in 1 2; do for T in 16 2; do P=$(pin $T); for b in main new; do
    t=$( { time HARK_TIMINGS=1 $P ./$b transcribe --backend cpu --model q8.bin --beam 1 --threads $T --format txt excerpt.flac > o/$b.txt 2>o/$b.err; } 2>&1 )
    echo "RESULT $b T=$T round=$r ${t}s $(check o/$b.txt) | $(grep 'timings' o/$b.err)"
  done; done; done
  echo "== bench whisper at $(el) s"
  for T in 16 2; do P=$(pin $T); for b in main new; do echo "-- $b T=$T"
    timeout 60 $P ./$b bench whisper --backend cpu --model q8.bin --audio excerpt.flac -r 3 --threads $T 2>&1 | grep -v '^$' | tail -6
  done; done
  echo "== profile (new, T=16) at $(el) s"
  HARK_CPUPROFILE=$OUT/new16.prof ./new transcribe --backend cpu --model q8.bin --beam 1 --threads 16 --format txt excerpt.flac > o/p.txt 2>/dev/null; echo "profile run $(check o/p.txt)"
  echo "== whisper.cpp at $(el) s"
  tar -xJf peers-w.tar.xz && timeout 120 bash $R/.gpu/wh37/c2/build-peers.sh build $W $W/peers --cpu whisper > $OUT/build.log 2>&1; echo "build exit $? at $(el) s"
  if [ -x peers/bin/whisper-cli ]; then for r in 1 2; do for T in 16 2; do P=$(pin $T)
    [ $(el) -lt $LIMIT ] || { echo "SKIPPED whisper.cpp T=$T round=$r at $(el) s"; continue; }
    t=$( { time $P ./peers/bin/whisper-cli -m q8.bin -f excerpt.flac -t $T -bs 1 -np -nt > o/w.txt 2>o/w.err; } 2>&1 ); echo "RESULT whisper.cpp T=$T round=$r ${t}s $(check o/w.txt)"
  done; done; fi
  echo "== done at $(el) s"; } 2>&1 | tee $OUT/run.log
