#!/bin/bash
# Issue #37 round 31 (c37s31): the LLM rows of issue #37's table on the device's 16-core CPU, today's main against a
# same-run llama.cpp, and the memory row. One call from the lead's checkout, fresh or warm machine:
#   K=.gpu/c37s31 bash .gpu/c37s31/call.sh     carry .gpu/c37s31: hark-main.xz (bench/cpu/build-hark.sh of main),
#       cpu.test.xz (engine/cpu's test binary at main, CGO_ENABLED=0 go test -c -trimpath -ldflags='-s -w'),
#       peers-src.tar.xz (build-peers.sh prepare's llama/ tree: whisper.cpp 233fe1fc9's ggml + the fork ae1a0b1c7),
#       build-peers.sh (../shared/tools/peers), smollm2.tar.xz (the kit's SmolLM2 tokenizer), this script.
# 1. llama-bench built CPU-only here (build-peers.sh build SRC OUT --cpu llama, 16 jobs) while hark writes the
#    SmolLM2-135M-shaped q8_0 file and cpu.test runs TestPackedModelMemory twice (VmRSS added by loading the file and
#    one pp512 + tg128 with the default options, New(Options{Threads: 2}), against 1.05 x (file + KV); its own file).
# 2. Timed: hark and llama-bench alternated (the order swapped each round), each `-r 3` pp512 + tg128 in one
#    process (hark bench llm --pp 512 --tg 128; llama-bench -p 512 -n 128), T < 16 pinned to CPUs F..F+T-1
#    (taskset, both tools): T=2 on CPUs 0-1 (RN rounds, default 6), then RM rounds (default 3) each at 16, 8, 4 and
#    T=2 on CPUs 2-3. No timed run starts after LIMIT s (from the script's start).
# 3. Profiles (HARK_CPUPROFILE, read here with go tool pprof): tg128 at 2 threads (CPUs 0-1), pp512 at 2 threads,
#    tg128 at 16 threads, if the script is under LIMIT+40 s and PROF=1 (the default).
# Output: $OUT/logs.tar.xz (run.log with the table at its end, llama-build.log, memory.log, prof-*.pb.gz).
set -u
K=${K:-.gpu/c37s31}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/tmp/c37s31w
RN=${RN:-6}; RM=${RM:-3}; LIMIT=${LIMIT:-250}; PROF=${PROF:-1}
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/src $W/td/llm-kit/tokenizers $W/logs && cd $W
rm -f $W/build.rc # a warm machine keeps /tmp: the last call's marker would end the wait for the build at once
tar -C $W/src -xJf $K/peers-src.tar.xz || exit 3
setsid bash -c "S=\$(date +%s); bash $K/build-peers.sh build $W/src $W/peers --cpu llama > $W/logs/llama-build.log 2>&1; echo \"\$? \$(( \$(date +%s) - S ))\" > $W/build.rc" < /dev/null > /dev/null 2>&1 &
for b in hark-main cpu.test; do xz -dc $K/$b.xz > $b && chmod +x $b || exit 3; done
tar -C $W/td/llm-kit/tokenizers -xJf $K/smollm2.tar.xz || exit 3
./hark-main bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $W/td/llm-kit/tokenizers/smollm2 --pp 8 --tg 0 -r 1 -t 4 > /dev/null 2>&1
M=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
{ echo "== memory at $(el) s (the llama.cpp build running beside it); $(cat /proc/loadavg)"
  for r in 1 2; do HARK_TESTDATA=$W/td ./cpu.test -test.run 'TestPackedModelMemory$' -test.v -test.count=1 2>&1 | grep -E 'memory_linux_test|PASS|FAIL|ok'; done
  echo "== done at $(el) s"; } > $W/logs/memory.log 2>&1
for i in $(seq 1 300); do [ -e build.rc ] && break; sleep 1; done
LB=$W/peers/bin/llama-bench
F=0
pin() { [ "$1" -ge 16 ] || echo "taskset -c $F-$(( F + $1 - 1 ))"; }
H() { local T=$1 r=$2
  echo "RUN T=$T F=$F round=$r hark: $($(pin $T) ./hark-main bench llm --backend cpu --model $M -t $T -r 3 --pp 512 --tg 128 2>&1 | grep -E '^samples' | tr '\n' '|') load $(cut -d' ' -f1 /proc/loadavg)"; }
L() { local T=$1 r=$2; [ -x $LB ] || { echo "NOPEER T=$T round=$r"; return; }
  echo "RUN T=$T F=$F round=$r llama: $($(pin $T) $LB -m $M -t $T -r 3 -p 512 -n 128 -o json 2>/dev/null | python3 -c '
import json,sys
for r in json.load(sys.stdin):
    t="pp512" if r["n_prompt"] else "tg128"
    print("samples llama %s t=%d t/s: %s"%(t,r["n_threads"]," ".join("%.2f"%x for x in r["samples_ts"])),end="|")')"; }
{ echo "== machine"; date -u; nproc; lscpu | grep -E 'Model name|Hypervisor|L3|Thread|Core|Socket|NUMA' | cut -c1-200; lscpu -e
  grep -o -E 'avx512[a-z_0-9]*|amx[a-z_0-9]*|avx_vnni' /proc/cpuinfo | sort -u | tr '\n' ' '; echo; cat /proc/loadavg; head -1 /proc/stat
  sha256sum hark-main cpu.test $M; ls -l $M; echo "llama.cpp build: exit and seconds $(cat build.rc 2>/dev/null || echo 'not finished')"; tail -3 logs/llama-build.log
  echo "== timed at $(el) s"
  for TF in 2:0 16:0 8:0 4:0 2:2; do
    T=${TF%:*}; F=${TF#*:}; n=$RN; [ $TF = 2:0 ] || n=$RM
    for r in $(seq 1 $n); do
      [ $(el) -lt $LIMIT ] || { echo "STOPPED at T=$T F=$F round $r, $(el) s"; break 2; }
      if [ $((r % 2)) = 1 ]; then H $T $r; L $T $r; else L $T $r; H $T $r; fi
    done
  done
  echo "== profiles at $(el) s"
  if [ $PROF = 1 ] && [ $(el) -lt $((LIMIT + 40)) ]; then
    F=0
    HARK_CPUPROFILE=$W/logs/prof-tg-t2.pb.gz taskset -c 0-1 ./hark-main bench llm --backend cpu --model $M -t 2 -r 5 --pp 0 --tg 128 2>&1 | grep -E '^samples'
    HARK_CPUPROFILE=$W/logs/prof-pp-t2.pb.gz taskset -c 0-1 ./hark-main bench llm --backend cpu --model $M -t 2 -r 5 --pp 512 --tg 0 2>&1 | grep -E '^samples'
    HARK_CPUPROFILE=$W/logs/prof-tg-t16.pb.gz ./hark-main bench llm --backend cpu --model $M -t 16 -r 5 --pp 0 --tg 128 2>&1 | grep -E '^samples'
  fi
  cat /proc/loadavg; head -1 /proc/stat; echo "== done at $(el) s"; } > $W/logs/run.log 2>&1
python3 - $W/logs/run.log <<'PY' >> $W/logs/run.log
import re,sys,collections,statistics as st
d=collections.defaultdict(dict); s0=[]
for l in open(sys.argv[1]):
    m=re.match(r'RUN T=(\d+) F=(\d+) round=(\d+) (\S+): (.*)',l)
    if m:
        for t,v in re.findall(r'(pp512|tg128) t=\d+ t/s: ([\d. ]+)',m[5]):
            d[((int(m[1]),int(m[2])),t,m[4])][int(m[3])]=st.mean(float(x) for x in v.split())
    if l.startswith('cpu '): s0.append([int(x) for x in l.split()[1:]])
if len(s0)>=2:
    dl=[b-a for a,b in zip(s0[0],s0[-1])]; tot=sum(dl) or 1
    print('cpu time over the call: user %.1f%% system %.1f%% idle %.1f%% iowait %.2f%% steal %.2f%%'%tuple(100*dl[i]/tot for i in (0,2,3,4,7)))
print('| T (first CPU) | test | hark | llama.cpp | ratio of medians | by round: median (min-max), rounds |')
for T in ((2,0),(2,2),(4,0),(8,0),(16,0)):
    for t in ('tg128','pp512'):
        a,c=d[(T,t,'hark')],d[(T,t,'llama')]
        if not a: continue
        med=lambda x: st.median(x.values()) if x else float('nan')
        rs=[a[r]/c[r] for r in a if r in c]
        print('| %d (%d) | %s | %.1f | %.1f | %.3f | %s |'%(T[0],T[1],t,med(a),med(c),med(a)/med(c) if c else float('nan'),
              '%.3f (%.3f-%.3f), %d'%(st.median(rs),min(rs),max(rs),len(rs)) if rs else '-'))
PY
tail -15 $W/logs/run.log; cat $W/logs/memory.log
tar -C $W -cJf $OUT/logs.tar.xz logs
