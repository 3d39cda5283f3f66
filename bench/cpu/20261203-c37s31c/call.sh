#!/bin/bash
# Issue #37's table from one run on the device's 16 cores (c37s31c): Whisper and LLM, Hark against whisper.cpp and
# llama.cpp built on the same machine, 2/4/8/16 threads, the memory row and the scaling rows. The kit is staged by
# prep.sh (this folder) in two carry folders, since the tree that travels leaves ~24 MiB for a carry and the Whisper
# model alone is 20 MB. Two calls on one machine, from the lead's checkout root, the second right after the first
# (the machine keeps /tmp while it is warm):
#   1. command `bash .gpu/c37table/a/call.sh put`, carry [".gpu/c37table/a"], timeout_s 300 (~90 s on 16 cores):
#      unpacks the peers' sources and builds whisper.cpp and llama.cpp CPU-only (build-peers.sh build ... --cpu,
#      the two trees at once, 16 jobs each), joins the kit q8_0 model (bench/cpu/q8split.py join, SHA-256 checked)
#      while they build, and says whether both peers built.
#   2. command `bash .gpu/c37table/b/call.sh run`, carry [".gpu/c37table/b"], timeout_s 600 (<= 540 s of script):
#      writes the SmolLM2-135M-shaped q8_0 GGUF (hark bench llm --type q8_0), runs TestPackedModelMemory twice (the
#      memory row), then rounds (default RN=8) until LIMIT, each round first the Whisper pairs and then the LLM pairs
#      at every thread count, the thread counts' order rotated each round and the tool order swapped each round, so a
#      call cut at LIMIT still holds every thread count of both parts:
#        Whisper: hark transcribe --backend cpu --model q8.bin --beam 1 --threads T --format txt excerpt.flac and
#                 whisper-cli -m q8.bin -f excerpt.flac -t T -bs 1 -np -nt, wall time of each process; Hark's text must
#                 equal the kit reference's (whitespace collapsed), else BAD and not counted; whisper.cpp's is its own.
#        LLM:     hark bench llm --backend cpu --model M -t T -r 3 --pp 512 --tg 128 and
#                 llama-bench -m M -t T -r 3 -p 512 -n 128 -o json, every repetition's tok/s logged.
#      T < 16 pinned to CPUs 0..T-1 with taskset (both tools). No pair starts unless it should end before LIMIT
#      (default 500 s from the script's start; estimates: a Whisper pair 6 + 40/T s, an LLM pair 12 s). Then, when
#      time is left, one CPU profile of Hark's 16-thread decode (tg128 -r 5). table.py prints the table in the
#      issue's format, the scaling rows, the memory row and each target's verdict.
# Output ($OUT): put: put.log; run: logs.tar.xz (run.log with the table at its end, memory.log, table.txt, prof-*, the
# peers' build logs) and run-live.log (run.log as it is written: what comes back if the call is killed).
# KA, KB: the two folders (default .gpu/c37table/a and b); RN, LIMIT, TS (thread counts), PARTS (w, l or wl), PROF=0
# to skip the profile.
set -u
PART=${1:-}; R=$(pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/tmp/c37table
KA=${KA:-.gpu/c37table/a}; KB=${KB:-.gpu/c37table/b}; RN=${RN:-8}; LIMIT=${LIMIT:-500}; PROF=${PROF:-1}
TS=${TS:-"2 4 8 16"}; PARTS=${PARTS:-wl} # w: the Whisper pairs, l: the LLM pairs
TO=${TO:-120} # no timed process runs longer (a hung one would cost the call)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W
KIT_SHA=75a856360437cbcbdb8cdc02e280dcebbe32ca45b3045725e473894edea9ea97
if [ "$PART" = put ]; then
  K=$(cd "$KA" && pwd) || exit 3
  rm -rf $W/src $W/peers $W/*.rc $W/q8.bin $W/put.ok $W/plogs; mkdir -p $W/src $W/plogs
  { date -u; nproc; cat /proc/loadavg; cat $K/commit.txt 2>/dev/null
    tar -C $W/src -xJf $K/peers-src.tar.xz || { echo "peers-src.tar.xz did not unpack"; exit 3; }
    for t in whisper llama; do
      ( s=$(date +%s); bash $K/build-peers.sh build $W/src $W/peers --cpu $t > $W/plogs/build-$t.log 2>&1
        echo "$? $(( $(date +%s) - s ))" > $W/build-$t.rc ) &
    done
    xz -dc $K/model.xz > $W/q8s.bin && python3 $R/bench/cpu/q8split.py join $W/q8s.bin $W/q8.bin && rm $W/q8s.bin
    echo "model: $(sha256sum $W/q8.bin | cut -c1-64) (kit $KIT_SHA) at $(el) s"
    wait
    for t in whisper llama; do echo "$t build: exit and seconds $(cat $W/build-$t.rc)"; tail -2 $W/plogs/build-$t.log; done
    ls -l $W/peers/bin
    ok=1; [ "$(sha256sum $W/q8.bin | cut -c1-64)" = $KIT_SHA ] || { ok=0; echo "MODEL BAD"; }
    for b in whisper-cli llama-bench; do [ -x $W/peers/bin/$b ] || { ok=0; echo "NO $b"; }; done
    [ $ok = 1 ] && date -u > $W/put.ok && echo "PUT OK at $(el) s: run the second call now" || echo "PUT FAILED at $(el) s"
  } 2>&1 | tee $OUT/put.log
  exit 0
fi
[ "$PART" = run ] || { sed -n 2,26p "$0"; exit 2; }
K=$(cd "$KB" && pwd) || exit 3
[ -e $W/q8.bin ] || { echo "no $W/q8.bin: the put call's machine is gone or put was not run; run put, then run"; exit 3; }
[ -e $W/put.ok ] || echo "WARNING: put did not end OK (a peer missing or the model's hash off): the rows run without it"
cd $W && rm -rf m o td logs && mkdir -p m o td/llm-kit/tokenizers logs
for b in hark cpu.test; do xz -dc $K/$b.xz > $b && chmod +x $b || exit 3; done
tar -C td/llm-kit/tokenizers -xJf $K/smollm2.tar.xz && cp $K/excerpt.flac $K/excerpt-expected.txt $K/table.py . || exit 3
./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $W/td/llm-kit/tokenizers/smollm2 --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
M=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
[ -s $M ] || { echo "hark bench llm wrote no $M"; exit 3; }
{ echo "== memory at $(el) s; $(cat /proc/loadavg)"
  for r in 1 2; do HARK_TESTDATA=$W/td ./cpu.test -test.run 'TestPackedModelMemory$' -test.v -test.count=1 2>&1 | grep -E 'memory_linux_test|PASS|FAIL|ok'; done
  echo "== done at $(el) s"; } > logs/memory.log 2>&1
WC=$W/peers/bin/whisper-cli; LB=$W/peers/bin/llama-bench
check() { python3 - "$1" excerpt-expected.txt <<'PY'
import re,sys
got=' '.join(re.sub(r'^\[[^]]*\]','',l) for l in open(sys.argv[1]).read().splitlines())
got=' '.join(got.split()); exp=' '.join(open(sys.argv[2]).read().split())
print('OK' if got==exp else 'BAD(%d vs %d chars; first diff at %d)'%(len(got),len(exp),next((i for i,(a,b) in enumerate(zip(got,exp)) if a!=b),min(len(got),len(exp)))))
PY
}
pin() { [ "$1" -ge 16 ] || echo "taskset -c 0-$(( $1 - 1 ))"; }
TIMEFORMAT=%R
WH() { local T=$1 r=$2 t
  t=$( { time HARK_TIMINGS=1 timeout $TO $(pin $T) ./hark transcribe --backend cpu --model q8.bin --beam 1 --threads $T --format txt excerpt.flac > o/h.txt 2>o/h.err; } 2>&1 )
  echo "RESULT hark T=$T round=$r ${t}s $(check o/h.txt) | $(grep timings o/h.err)"; }
WW() { local T=$1 r=$2 t; [ -x $WC ] || { echo "NOPEER whisper.cpp T=$T round=$r"; return; }
  t=$( { time timeout $TO $(pin $T) $WC -m q8.bin -f excerpt.flac -t $T -bs 1 -np -nt > o/w.txt 2>o/w.err; } 2>&1 )
  echo "RESULT whisper.cpp T=$T round=$r ${t}s $(check o/w.txt) | $(grep -E 'total time' o/w.err | tr -s ' ')"; }
LH() { local T=$1 r=$2
  echo "RUN T=$T F=0 round=$r hark: $(timeout $TO $(pin $T) ./hark bench llm --backend cpu --model $M -t $T -r 3 --pp 512 --tg 128 2>&1 | grep -E '^samples' | tr '\n' '|') load $(cut -d' ' -f1 /proc/loadavg)"; }
LL() { local T=$1 r=$2; [ -x $LB ] || { echo "NOPEER llama.cpp T=$T round=$r"; return; }
  echo "RUN T=$T F=0 round=$r llama: $(timeout $TO $(pin $T) $LB -m $M -t $T -r 3 -p 512 -n 128 -o json 2>/dev/null | python3 -c '
import json,sys
for r in json.load(sys.stdin):
    t="pp512" if r["n_prompt"] else "tg128"
    print("samples llama %s t=%d t/s: %s"%(t,r["n_threads"]," ".join("%.2f"%x for x in r["samples_ts"])),end="|")')"; }
fits() { [ $(( $(el) + $1 )) -le $LIMIT ]; }
{ echo "== machine"; date -u; nproc; lscpu | grep -E 'Model name|Hypervisor|L3|Thread|Core|Socket|NUMA' | cut -c1-200
  grep -o -E 'avx512[a-z_0-9]*|amx[a-z_0-9]*|avx_vnni' /proc/cpuinfo | sort -u | tr '\n' ' '; echo; cat /proc/loadavg; head -1 /proc/stat
  cat $K/commit.txt; sha256sum hark cpu.test q8.bin excerpt.flac $M $WC $LB 2>&1; ls -l $M
  for t in whisper llama; do echo "$t build (put call): exit and seconds $(cat $W/build-$t.rc 2>/dev/null)"; done
  echo "== timed at $(el) s (RN=$RN LIMIT=$LIMIT TS=$TS PARTS=$PARTS)"
  set -- $TS; n=$#
  for r in $(seq 1 $RN); do
    rot=(); for i in $(seq 0 $((n - 1))); do j=$(( (i + r - 1) % n + 1 )); rot+=(${!j}); done
    for T in "${rot[@]}"; do
      [[ $PARTS == *w* ]] || break
      fits $(( 6 + 40 / T )) || { echo "STOPPED before Whisper T=$T round $r at $(el) s"; break 2; }
      if [ $((r % 2)) = 1 ]; then WH $T $r; WW $T $r; else WW $T $r; WH $T $r; fi
    done
    for T in "${rot[@]}"; do
      [[ $PARTS == *l* ]] || break
      fits 12 || { echo "STOPPED before LLM T=$T round $r at $(el) s"; break 2; }
      if [ $((r % 2)) = 1 ]; then LH $T $r; LL $T $r; else LL $T $r; LH $T $r; fi
    done
  done
  echo "== after the rounds at $(el) s"
  if [ $PROF = 1 ] && fits 10; then
    HARK_CPUPROFILE=$W/logs/prof-tg-t16.pb.gz ./hark bench llm --backend cpu --model $M -t 16 -r 5 --pp 0 --tg 128 2>&1 | grep -E '^samples'
  fi
  cat /proc/loadavg; head -1 /proc/stat; echo "== done at $(el) s"; } 2>&1 | tee $OUT/run-live.log > logs/run.log # a call killed at its limit still returns the rows
python3 table.py logs/run.log logs/memory.log > logs/table.txt 2>&1
cat logs/table.txt >> logs/run.log
grep -E '^(RESULT|RUN|STOPPED|NOPEER)' logs/run.log | cut -c1-160 | tail -12; cat logs/table.txt
cp $W/plogs/build-*.log logs/ 2>/dev/null # the put call's peer builds
tar -C $W -cJf $OUT/logs.tar.xz logs
echo "run ended at $(el) s"
