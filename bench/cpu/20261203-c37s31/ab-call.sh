#!/bin/bash
# Issue #37 round 31 (c37s31), staged, not run: main against the branch (prepQ8_0X in assembly, 7af3024) on the
# device's 16-core CPU, tg128 only (pp512 runs the same code but for its last token). One call from the lead's
# checkout, any machine kind with the 16-core CPU, timeout_s 400:
#   K=.gpu/c37s31b bash .gpu/c37s31b/ab-call.sh    carry .gpu/c37s31b: hark-main.xz, hark-br.xz
#       (bench/cpu/build-hark.sh 1a5885c and 7af3024), smollm2.tar.xz (the kit tokenizer), this script.
# Rounds (the order swapped each round), each `hark bench llm --pp 0 --tg 128 -r 3`: RN (default 8) at 16 threads,
# then RN at 2 threads on CPUs 0-1, then RN at 8 threads on CPUs 0-7; no run starts after LIMIT s (default 300).
# Decides: branch/main at 16 threads (expected up to +10%: the caller prepares each product's activation row while
# 15 helpers wait, 11% of its time in round 31's profile) and at 2 (expected +1-2%); the decode scaling row
# (>= 2.5x) moves with the 16-thread rate.
set -u
K=${K:-.gpu/c37s31b}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/tmp/c37s31b
RN=${RN:-8}; LIMIT=${LIMIT:-300}
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m && cd $W
for b in hark-main hark-br; do xz -dc $K/$b.xz > $b && chmod +x $b || exit 3; done
tar -xJf $K/smollm2.tar.xz || exit 3
./hark-main bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $W/smollm2 --pp 8 --tg 0 -r 1 -t 4 > /dev/null 2>&1
M=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
pin() { [ "$1" -ge 16 ] || echo "taskset -c 0-$(( $1 - 1 ))"; }
H() { echo "RUN T=$1 F=0 round=$2 $3: $($(pin $1) ./$3 bench llm --backend cpu --model $M -t $1 -r 3 --pp 0 --tg 128 2>&1 | grep -E '^samples' | tr '\n' '|')"; }
{ date -u; nproc; cat /proc/loadavg; sha256sum hark-main hark-br $M
  for T in 16 2 8; do
    for r in $(seq 1 $RN); do
      [ $(el) -lt $LIMIT ] || { echo "STOPPED at T=$T round $r, $(el) s"; break 2; }
      if [ $((r % 2)) = 1 ]; then H $T $r hark-main; H $T $r hark-br; else H $T $r hark-br; H $T $r hark-main; fi
    done
  done
  cat /proc/loadavg; echo "== done at $(el) s"; } > $OUT/ab.log 2>&1
python3 - $OUT/ab.log <<'PY' | tee -a $OUT/ab.log
import re,sys,collections,statistics as st
d=collections.defaultdict(dict)
for l in open(sys.argv[1]):
    m=re.match(r'RUN T=(\d+) F=0 round=(\d+) (\S+): .*tg128 t=\d+ t/s: ([\d. ]+)',l)
    if m: d[(int(m[1]),m[3])][int(m[2])]=st.mean(float(x) for x in m[4].split())
for T in (2,8,16):
    a,b=d[(T,'hark-main')],d[(T,'hark-br')]; rs=[r for r in a if r in b]
    if not rs: continue
    q=[b[r]/a[r] for r in rs]
    print('T=%d tg128 main %.1f branch %.1f, branch/main by round median %.3f (%.3f-%.3f), ahead in %d of %d'%(
        T,st.median(a[r] for r in rs),st.median(b[r] for r in rs),st.median(q),min(q),max(q),sum(x>1 for x in q),len(q)))
PY
