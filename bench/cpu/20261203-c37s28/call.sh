#!/bin/bash
# Issue #37, twenty-eighth session, c37s28: Whisper's 2 -> 16-thread scaling, round 6 (the decoder's cross-attention
# as one job), on the device's 16-core CPU. Three calls on one warm machine, from the repository root, each within
# 30 s of the last:
#   bash .gpu/c37s27/s1/call.sh put s1; bash .gpu/c37s27/s2/call.sh put s2; bash .gpu/c37s28/r/call.sh
# The two puts are round 5's (bench/cpu/20261203-c37s27/call.sh: the kit q8_0 model in two xz parts, the excerpt),
# copied into /tmp/c37s27w. r = hark-base.xz (bench/cpu/build-hark.sh of main c25ff91, which has round 5),
# hark-new.xz (the same of branch c37s28 at 8d14e51), excerpt-expected.txt (the kit reference's text of the segments
# starting before 204.2 s), this script.
# base and new alternate (the first of a pair swaps each round): R16 rounds at 16 threads, R2 at 2 (pinned to CPUs
# 0-1 with taskset), one at 8 (pinned 0-7); HARK_TIMINGS=1; each text checked against the kit reference. Then
# `hark bench whisper -r 3` of both at 16 threads (decoder ms a token: the change's own measure), one 16-thread CPU
# profile of new, and a table of medians and minima.
set -u
R=$(pwd); W=/tmp/c37s27w; OUT=${OUT:-/tmp/out}; S=$(date +%s); R16=${R16:-8}; R2=${R2:-3}
el() { echo $(( $(date +%s) - S )); }
mkdir -p $W/o $OUT && cd $W
cp $R/.gpu/c37s28/r/* . && cat model.xz.aa model.xz.ab | xz -dc > q8s.bin && python3 $R/bench/cpu/q8split.py join q8s.bin q8.bin && rm q8s.bin || exit 3
for b in base new; do xz -dc hark-$b.xz > $b && chmod +x $b || exit 3; done
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
pair() { if [ $(($3 % 2)) = 1 ]; then one base $1 $3; one new $1 $3; else one new $1 $3; one base $1 $3; fi; }
{ echo "== machine"; date -u; nproc; lscpu | grep -E 'Model name|Hypervisor|L3' | cut -c1-200; cat /proc/loadavg; sha256sum base new q8.bin excerpt.flac
  echo "== transcribe at $(el) s"
  for r in $(seq 1 $R16); do pair 16 16 $r; [ $r -le $R2 ] && pair 2 2 $r; done
  pair 8 8 1
  echo "== bench whisper at $(el) s"
  for b in base new; do echo "-- $b T=16"
    timeout 60 ./$b bench whisper --backend cpu --model q8.bin --audio excerpt.flac -r 3 --threads 16 2>&1 | grep -E '^\| q8|^samples (encode|decode|greedy)'
  done
  echo "== profile (new, T=16) at $(el) s"
  HARK_CPUPROFILE=$OUT/new16.prof ./new transcribe --backend cpu --model q8.bin --beam 1 --threads 16 --format txt excerpt.flac > o/p.txt 2>/dev/null; echo "profile run $(check o/p.txt)"
  cat /proc/loadavg; echo "== done at $(el) s"; } 2>&1 | tee $OUT/run.log
python3 - $OUT/run.log <<'PY' | tee -a $OUT/run.log
import re,sys,collections,statistics as st
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    m=re.match(r'RESULT (\w+) T=(\d+) round=\d+ ([\d.]+)s (\S+)',l)
    if m: d[(m[1],int(m[2]))].append(float(m[3]))
print('| T | base median (min) | new median (min) | new/base medians | runs |')
for T in (16,8,2):
    a,b=d[('base',T)],d[('new',T)]
    if a and b: print('| %d | %.3f (%.3f) | %.3f (%.3f) | %.3f | %d |'%(T,st.median(a),min(a),st.median(b),min(b),st.median(b)/st.median(a),len(a)))
for k in ('base','new'):
    a,b=d[(k,2)],d[(k,16)]
    if a and b: print('%s 2->16: medians %.2fx, minima %.2fx'%(k,st.median(a)/st.median(b),min(a)/min(b)))
PY
