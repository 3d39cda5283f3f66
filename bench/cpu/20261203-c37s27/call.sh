#!/bin/bash
# Issue #37, twenty-seventh session, c37s27: Whisper's 2 -> 16-thread scaling, round 5, on the device's 16-core CPU.
# Three calls on one warm machine (the tree, ~48 MB as the tool counts it, and a call's carry must fit 64 MiB), from
# the repository root:
#   bash .gpu/c37s27/s1/call.sh put s1; bash .gpu/c37s27/s2/call.sh put s2; bash .gpu/c37s27/r/call.sh run
# model.xz = the kit q8_0 model reordered by bench/cpu/q8split.py, xz -9e, cut by `split -b 15M`: s1 = model.xz.aa;
# s2 = model.xz.ab, excerpt.flac (the long-form file cut at 204.2 s: `ffmpeg -i ljspeech-longform-LJ001-0021-0076.wav
# -t 204.2 -c:a flac`, as round 4's), hark-main.xz; r = hark-new.xz (bench/cpu/build-hark.sh builds of main 2fdb9c0
# and of the branch at 2e1c4b8), excerpt-expected.txt (the kit reference's text of the segments starting before
# 204.2 s), this script.
# Hark main and new alternate (the first of a pair swaps each round), ROUNDS rounds at 16 and 2 threads, 1 at 8 and
# 4 (none with MID=0); T < 16 pinned to CPUs 0..T-1 with taskset; HARK_TIMINGS=1 (load, spectrogram, how long the file waited for
# it); each text checked against the kit reference (whitespace collapsed; else BAD). Then one 16-thread CPU profile
# of new, and a table of the means.
set -u
PART=$1; R=$(pwd); W=/tmp/c37s27w; OUT=${OUT:-/tmp/out}; S=$(date +%s); ROUNDS=${ROUNDS:-4}
el() { echo $(( $(date +%s) - S )); }
mkdir -p $W/o $OUT && cd $W
if [ $PART = put ]; then cp $R/.gpu/c37s27/$2/* . || exit 3; ls -la; exit 0; fi
cp $R/.gpu/c37s27/r/* . && cat model.xz.aa model.xz.ab | xz -dc > q8s.bin && python3 $R/bench/cpu/q8split.py join q8s.bin q8.bin && rm q8s.bin || exit 3
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
{ echo "== machine"; date -u; nproc; lscpu | grep -E 'Model name|Hypervisor|L3' | cut -c1-200; cat /proc/loadavg; sha256sum main new q8.bin excerpt.flac
  echo "== transcribe at $(el) s"
  for r in $(seq 1 $ROUNDS); do for T in 16 2; do
    if [ $((r % 2)) = 1 ]; then one main $T $r; one new $T $r; else one new $T $r; one main $T $r; fi
  done; done
  [ "${MID:-1}" = 0 ] || for T in 8 4; do one main $T 1; one new $T 1; done
  echo "== profile (new, T=16) at $(el) s"
  HARK_CPUPROFILE=$OUT/new16.prof ./new transcribe --backend cpu --model q8.bin --beam 1 --threads 16 --format txt excerpt.flac > o/p.txt 2>/dev/null; echo "profile run $(check o/p.txt)"
  cat /proc/loadavg; echo "== done at $(el) s"; } 2>&1 | tee $OUT/run.log
python3 - $OUT/run.log <<'PY' | tee -a $OUT/run.log
import re,sys,collections
d=collections.defaultdict(list); sp=collections.defaultdict(list)
for l in open(sys.argv[1]):
    m=re.match(r'RESULT (\w+) T=(\d+) round=\d+ ([\d.]+)s (\S+) .*spectrogram ([\d.]+) \(waited ([\d.]+)\)',l)
    if m: d[(m[1],int(m[2]))].append(float(m[3])); sp[(m[1],int(m[2]))].append((float(m[5]),float(m[6])))
print('| T | main wall | new wall | new/main | main spectrogram (waited) | new spectrogram (waited) |')
for T in (16,8,4,2):
    a,b=d[('main',T)],d[('new',T)]
    if not a or not b: continue
    f=lambda k:'%.3f (%.3f)'%(sum(x for x,_ in sp[k])/len(sp[k]),sum(y for _,y in sp[k])/len(sp[k]))
    print('| %d | %.3f | %.3f | %.3f | %s | %s |'%(T,sum(a)/len(a),sum(b)/len(b),sum(b)/len(b)/(sum(a)/len(a)),f(('main',T)),f(('new',T))))
for k in ('main','new'):
    if d[(k,2)] and d[(k,16)]: print('%s 2->16: %.2fx'%(k,(sum(d[(k,2)])/len(d[(k,2)]))/(sum(d[(k,16)])/len(d[(k,16)]))))
PY
