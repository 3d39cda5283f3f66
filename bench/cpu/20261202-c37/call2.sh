#!/bin/bash
# Issue #37, twenty-sixth session, c37, second round: main against the branch's head (both commits), three calls on
# one warm machine as call.sh made them (the tree, 48 MB on disk, and a call's carry must fit 64 MiB), from the
# repository root:
#   bash .gpu/c37/s1/call2.sh put s1; bash .gpu/c37/s2/call2.sh put s2; bash .gpu/c37/r/call2.sh run
# s1 = model.xz.aa; s2 = model.xz.ab, hark-main.xz; r = hark-new.xz, excerpt.flac, excerpt-expected.txt (as call.sh
# says; hark-new.xz = bench/cpu/build-hark.sh of c37 a14da8d, hark-main.xz the same a7be5d0 build as call.sh's).
# Hark main and new alternate, 3 rounds at 16 and 2 threads, 1 at 8 and 4; T < 16 pinned to CPUs 0..T-1 with
# taskset; HARK_TIMINGS=1; each text checked against the kit reference (whitespace collapsed; else BAD). Then
# `hark bench whisper` of both at 16 and 2 threads and one 16-thread CPU profile of new.
set -u
PART=$1; R=$(pwd); W=/tmp/c37w; OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $W/o $OUT && cd $W
if [ $PART = put ]; then cp $R/.gpu/c37/$2/* . || exit 3; ls -la; exit 0; fi
cp $R/.gpu/c37/r/* . && cat model.xz.aa model.xz.ab | xz -dc > q8s.bin && python3 $R/bench/cpu/q8split.py join q8s.bin q8.bin && rm q8s.bin || exit 3
for b in main new; do xz -dc hark-$b.xz > $b && chmod +x $b || exit 3; done
check() { python3 - "$1" excerpt-expected.txt <<'PY'
import re,sys
got=' '.join(re.sub(r'^\[[^]]*\]','',l) for l in open(sys.argv[1]).read().splitlines())
got=' '.join(got.split()); exp=' '.join(open(sys.argv[2]).read().split())
print('OK' if got==exp else 'BAD(%d vs %d chars; first diff at %d)'%(len(got),len(exp),next((i for i,(a,b) in enumerate(zip(got,exp)) if a!=b),min(len(got),len(exp)))))
PY
}
pin() { [ "$1" -ge 16 ] || echo "taskset -c 0-$(( $1 - 1 ))"; }
TIMEFORMAT=%R
one() { local b=$1 T=$2 r=$3 P; P=$(pin $T)
  t=$( { time HARK_TIMINGS=1 $P ./$b transcribe --backend cpu --model q8.bin --beam 1 --threads $T --format txt excerpt.flac > o/$b.txt 2>o/$b.err; } 2>&1 )
  echo "RESULT $b T=$T round=$r ${t}s $(check o/$b.txt) | $(grep 'timings' o/$b.err)"; }
{ echo "== machine"; date -u; nproc; lscpu | grep -E 'Model name|Hypervisor|Flags' | cut -c1-400; cat /proc/loadavg; sha256sum main new q8.bin excerpt.flac
  echo "== transcribe at $(el) s"
  for r in 1 2 3; do for T in 16 2; do for b in main new; do one $b $T $r; done; done; done
  for T in 8 4; do for b in main new; do one $b $T 1; done; done
  echo "== bench whisper at $(el) s"
  for T in 16 2; do P=$(pin $T); for b in main new; do echo "-- $b T=$T"
    timeout 60 $P ./$b bench whisper --backend cpu --model q8.bin --audio excerpt.flac -r 3 --threads $T 2>&1 | grep -E '^\| q8|^samples (encode|decode|greedy)'
  done; done
  echo "== profile (new, T=16) at $(el) s"
  HARK_CPUPROFILE=$OUT/new16.prof ./new transcribe --backend cpu --model q8.bin --beam 1 --threads 16 --format txt excerpt.flac > o/p.txt 2>/dev/null; echo "profile run $(check o/p.txt)"
  cat /proc/loadavg; echo "== done at $(el) s"; } 2>&1 | tee $OUT/run.log
