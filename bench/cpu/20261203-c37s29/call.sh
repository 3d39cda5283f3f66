#!/bin/bash
# Issue #37, twenty-ninth session, c37s29: Whisper's 2 -> 16-thread scaling, round 7 (the second quiet call for the
# scaling row), and Hark beside a same-run whisper.cpp at 16 and 8 threads, on the device's 16-core CPU.
# Two calls on one warm machine, from the repository root, the second within 30 s of the first:
#   bash .gpu/c37s29/a/call.sh put      carry .gpu/c37s29/a: model.xz.aa (the kit q8_0 model reordered by
#                                       bench/cpu/q8split.py, xz -9e, first 15 MiB: round 5's part), peers-w.tar.xz
#                                       (whisper.cpp 233fe1fc9's CMakeLists/cmake/src/include/ggml/examples, the other
#                                       ggml backends, CPU architectures and SDL/wasm/mobile examples dropped),
#                                       build-peers.sh (../shared/tools/peers), this script. Starts the CPU-only
#                                       whisper.cpp build in its own session (setsid) and returns at once.
#   bash .gpu/c37s29/b/call.sh run      carry .gpu/c37s29/b: model.xz.ab, excerpt.flac (the long-form file cut at
#                                       204.2 s, as rounds 4-6), hark-main.xz (bench/cpu/build-hark.sh of main
#                                       1bc52a4), excerpt-expected.txt (the kit reference's text of the segments
#                                       starting before 204.2 s), this script.
# run: waits for the build, then RN rounds (default 8): Hark at 16 threads, Hark at 2 (pinned to CPUs 0-1 with
# taskset), whisper.cpp at 16 in the first WR rounds (default 4), the order swapped each round (odd: H16 W16 H2,
# even: H2 W16 H16); with MID=1 one round at 8 threads (both pinned 0-7); then one 16-thread CPU profile of Hark; HARK_TIMINGS=1 on Hark's runs; every text checked
# against the kit reference (whitespace collapsed; whisper.cpp's text is its own and differs: shown, not required).
# Noise check: /proc/loadavg and /proc/stat (steal, iowait) at the start and the end, as rounds 4-6 read loadavg.
# whisper-cli as in the fourth run and round 3: -t T -bs 1 -np -nt on the excerpt.
set -u
PART=$1; R=$(pwd); W=/tmp/c37s29w; OUT=${OUT:-/tmp/out}; S=$(date +%s); RN=${RN:-8}; WR=${WR:-4}; MID=${MID:-0}; LIMIT=${LIMIT:-140}
el() { echo $(( $(date +%s) - S )); }
mkdir -p $W/o $OUT && cd $W
if [ $PART = put ]; then
  cp $R/.gpu/c37s29/a/* . && tar -xJf peers-w.tar.xz || exit 3
  { date -u; nproc; cat /proc/loadavg; ls -la; } | tee $OUT/put.log
  setsid bash -c "S=\$(date +%s); bash $W/build-peers.sh build $W $W/peers --cpu whisper > $W/build.log 2>&1; echo \"\$? \$(( \$(date +%s) - S ))\" > $W/build.rc" < /dev/null > /dev/null 2>&1 &
  echo "build started"; exit 0
fi
cp $R/.gpu/c37s29/b/* . && cat model.xz.aa model.xz.ab | xz -dc > q8s.bin && python3 $R/bench/cpu/q8split.py join q8s.bin q8.bin && rm q8s.bin || { echo "no model part a: the put call's machine is gone"; exit 3; }
xz -dc hark-main.xz > hark && chmod +x hark || exit 3
for i in $(seq 1 120); do [ -e build.rc ] && break; sleep 1; done
check() { python3 - "$1" excerpt-expected.txt <<'PY'
import re,sys
got=' '.join(re.sub(r'^\[[^]]*\]','',l) for l in open(sys.argv[1]).read().splitlines())
got=' '.join(got.split()); exp=' '.join(open(sys.argv[2]).read().split())
print('OK' if got==exp else 'BAD(%d vs %d chars; first diff at %d)'%(len(got),len(exp),next((i for i,(a,b) in enumerate(zip(got,exp)) if a!=b),min(len(got),len(exp)))))
PY
}
pin() { [ "$1" -ge 16 ] || echo "taskset -c 0-$(( $1 - 1 ))"; }
TIMEFORMAT=%R
H() { local T=$1 r=$2 P; P=$(pin $T)
  t=$( { time HARK_TIMINGS=1 $P ./hark transcribe --backend cpu --model q8.bin --beam 1 --threads $T --format txt excerpt.flac > o/h.txt 2>o/h.err; } 2>&1 )
  echo "RESULT hark T=$T round=$r ${t}s $(check o/h.txt) | $(grep 'timings' o/h.err)"; }
Wc() { local T=$1 r=$2 P; P=$(pin $T); [ -x peers/bin/whisper-cli ] || { echo "NOPEER whisper.cpp T=$T round=$r"; return; }
  t=$( { time $P ./peers/bin/whisper-cli -m q8.bin -f excerpt.flac -t $T -bs 1 -np -nt > o/w.txt 2>o/w.err; } 2>&1 )
  echo "RESULT whisper.cpp T=$T round=$r ${t}s $(check o/w.txt) | $(grep -E 'total time' o/w.err | tr -s ' ')"; }
{ echo "== machine"; date -u; nproc; lscpu | grep -E 'Model name|Hypervisor|L3' | cut -c1-200; grep -o -E 'avx512[a-z_0-9]*|amx[a-z_0-9]*|avx_vnni' /proc/cpuinfo | sort -u | tr '\n' ' '; echo; cat /proc/loadavg; head -1 /proc/stat
  sha256sum hark q8.bin excerpt.flac; echo "whisper.cpp build: exit and seconds $(cat build.rc 2>/dev/null || echo 'not finished')"; tail -3 build.log
  echo "== transcribe at $(el) s"
  for r in $(seq 1 $RN); do
    [ $(el) -lt $LIMIT ] || { echo "STOPPED at round $r, $(el) s"; break; }
    w=:; [ $r -le $WR ] && w=Wc
    if [ $((r % 2)) = 1 ]; then H 16 $r; $w 16 $r; H 2 $r; else H 2 $r; $w 16 $r; H 16 $r; fi
  done
  [ $MID = 1 ] && [ $(el) -lt $LIMIT ] && { H 8 1; Wc 8 1; }
  echo "== profile (hark, T=16) at $(el) s"
  HARK_CPUPROFILE=$OUT/main16.prof ./hark transcribe --backend cpu --model q8.bin --beam 1 --threads 16 --format txt excerpt.flac > o/p.txt 2>/dev/null; echo "profile run $(check o/p.txt)"
  cat /proc/loadavg; head -1 /proc/stat; echo "== done at $(el) s"; } 2>&1 | tee $OUT/run.log
cp build.log $OUT/whispercpp-build.log 2>/dev/null
python3 - $OUT/run.log <<'PY' | tee -a $OUT/run.log
import re,sys,collections,statistics as st
d=collections.defaultdict(list); st0=[]
for l in open(sys.argv[1]):
    m=re.match(r'RESULT (\S+) T=(\d+) round=(\d+) ([\d.]+)s (\S+)',l)
    if m: d[(m[1],int(m[2]))].append((int(m[3]),float(m[4])))
    if l.startswith('cpu '): st0.append([int(x) for x in l.split()[1:]])
if len(st0)==2:
    dl=[b-a for a,b in zip(*st0)]; tot=sum(dl) or 1
    print('cpu time over the call: user %.1f%% system %.1f%% idle %.1f%% iowait %.2f%% steal %.2f%%'%tuple(100*dl[i]/tot for i in (0,2,3,4,7)))
def s(k):
    v=[t for _,t in d[k]]
    return '%.3f / %.3f / %.3f (%d: %s)'%(st.median(v),min(v),st.mean(v),len(v),' '.join('%.3f'%t for t in v)) if v else '-'
print('| who | T | median / min / mean s (runs) |')
for k in sorted(d): print('| %s | %d | %s |'%(k[0],k[1],s(k)))
h2=[t for _,t in d[('hark',2)]]; h16=[t for _,t in d[('hark',16)]]
if h2 and h16: print('hark 2->16: medians %.2fx, minima %.2fx, means %.2fx'%(st.median(h2)/st.median(h16),min(h2)/min(h16),st.mean(h2)/st.mean(h16)))
for T in (16,8):
    a=dict(d[('hark',T)]); b=dict(d[('whisper.cpp',T)])
    p=[a[r]/b[r] for r in sorted(a) if r in b]
    if p: print('hark/whisper.cpp T=%d: by round %s; median %.3f; on medians %.3f'%(T,' '.join('%.3f'%x for x in p),st.median(p),st.median(a.values())/st.median(b.values())))
PY
