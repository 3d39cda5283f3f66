#!/bin/bash
# Issue #37, cpu16 helper, diagnostic call d1 (2026-11-30): why Hark's Whisper at 16 threads is slower than at 8 and
# varies run to run. Binary: main a2d18b3 (the lead's call1 hark.xz, bench/cpu/prep.sh build). Carry ($K): hark.xz,
# whisper-cli.xz, model.xz, q8split.py, excerpt.flac, excerpt-expected.txt.
# Measures: hark bench whisper (encoder ms/window, decoder ms/token) at 16 and 8 threads; transcribe wall time with
# /usr/bin/time (user/sys CPU, involuntary and voluntary context switches) at 16 threads plain, with
# OPENBLAS_NUM_THREADS=1 (no OpenBLAS thread team), HARK_NOBLAS=1 (no OpenBLAS), GODEBUG=gctrace=1 (GC count),
# and at 15 threads (one core left free), 8 pinned.
set -u
K=${K:-.gpu/cpu16}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/o && cd $W
xz -dc $K/hark.xz > hark && chmod +x hark
xz -dc $K/whisper-cli.xz > whisper-cli && chmod +x whisper-cli
xz -dc $K/model.xz > q8s.bin && python3 $K/q8split.py join q8s.bin q8.bin && rm q8s.bin && cp $K/excerpt.flac .
check() { python3 - "$1" "$K/excerpt-expected.txt" <<'PY'
import re,sys
got=' '.join(re.sub(r'^\[[^]]*\]','',l) for l in open(sys.argv[1]).read().splitlines())
got=' '.join(got.split()); exp=' '.join(open(sys.argv[2]).read().split())
print('OK' if got==exp else 'BAD(%d vs %d chars)'%(len(got),len(exp)))
PY
}
TF="%e s user %U sys %S invol %c vol %w"
tr() { # label, then the env/taskset prefix and threads
  local l=$1 T=$2; shift 2
  env "$@" /usr/bin/time -f "$TF" ./hark transcribe --backend cpu --model q8.bin --beam 1 --threads $T --format txt excerpt.flac > o/h.txt 2>o/h.err
  echo "RESULT $l T=$T $(tail -1 o/h.err) $(check o/h.txt) gc=$(grep -c '^gc ' o/h.err)"
}
{ echo "== at $(el) s; $(nproc) cpus; $(cat /proc/loadavg)"; sha256sum hark q8.bin
tr plain 16
tr plain 16
tr plain 8 taskset -c 0-7
tr plain 16
tr blas1 16 OPENBLAS_NUM_THREADS=1
tr noblas 16 HARK_NOBLAS=1
tr gctrace 16 GODEBUG=gctrace=1
tr t15 15 taskset -c 0-14
tr blas1 16 OPENBLAS_NUM_THREADS=1
/usr/bin/time -f "$TF" ./whisper-cli -m q8.bin -f excerpt.flac -t 16 -bs 1 -np -nt > o/w.txt 2>o/w.err; echo "RESULT whisper.cpp T=16 $(tail -1 o/w.err)"
for T in 16 8; do P=""; [ $T = 8 ] && P="taskset -c 0-7"
  echo "== bench whisper T=$T"; $P ./hark bench whisper --backend cpu --model q8.bin --audio excerpt.flac -t $T --tokens 64 -r 5 2>&1 | tail -4
done
echo "== done at $(el) s; $(cat /proc/loadavg)"; } > $OUT/d1.log 2>&1
cat $OUT/d1.log
