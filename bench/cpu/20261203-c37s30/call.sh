#!/bin/bash
# Issue #37 round 30 (c37s30): the LLM's rows on the device's 16-core CPU, main against this branch (the packed
# Q8_0 mat-vec reading activations prepared once a product) against a same-run llama.cpp, and a sweep of the
# packed kernel's prefetch distance. One call from the repository root, fresh or warm machine:
#   bash .gpu/c37s30/call.sh        carry .gpu/c37s30: hark-main.xz, hark-br.xz (bench/cpu/build-hark.sh of main
#                                   and of the branch), peers-src.tar.xz (build-peers.sh prepare's llama tree of
#                                   whisper.cpp 233fe1fc9 + Raudbjorn/ggml-llama.cpp ae1a0b1c7, as q34s29's calls),
#                                   build-peers.sh (../shared/tools/peers), smollm2.tar.xz (the kit's SmolLM2
#                                   tokenizer, which hark bench llm writes into its GGUF), cpu-pf.test.xz (engine/cpu's
#                                   test binary with the prefetch variants of pf-variants.s.diff), this script.
# 1. llama-bench built CPU-only here (build-peers.sh build SRC OUT --cpu llama, 16 jobs; ~1-2 min), while the
#    branch's hark writes the SmolLM2-135M-shaped q8_0 file (hark bench llm --type q8_0).
# 2. Rounds at T = 2 on CPUs 0-1 (RN rounds, default 8), then (RM rounds each, default 3) T = 2 on CPUs 2-3, 4, 16
#    and 8: main, branch and llama-bench each `-r 3` pp512 + tg128 in one process (hark bench llm --pp 512 --tg 128;
#    llama-bench -p 512 -n 128), the order reversed every other round; T < 16 pinned to CPUs F..F+T-1 (taskset,
#    every tool). No timed run starts after LIMIT s. Why CPUs 2-3 and T = 4: in the eighteenth session's table Hark
#    went from 2 to 4 threads 2.43x (tg128) and 2.45x (pp512), llama.cpp 2.0x and 1.73x: the 2-thread pair (CPUs
#    0-1: interrupts? SMT siblings? `lscpu -e` below says) may cost Hark more than it costs llama.cpp.
# 3. The prefetch sweep (TestPFCPU: thread CPU time a 49152x576 product over 5 copies, 150 MB; TestPFChunks: 400
#    576x576 products, 141 MB, each in 12-group chunks as the 2-thread decode splits them; variants P = main's
#    kernel, X = the branch's, A/B = X prefetching 8/16 blocks ahead, C = X plus a PREFETCHT1 32 blocks ahead; 15
#    alternated rounds, min and median), one process on CPU 0, then two at once on CPUs 0 and 1 (the 2-thread
#    decode's bandwidth share). Source: pf-variants.s.diff and zz_pf_amd64_test.go.txt beside this script.
# Decides: branch/main tg128 at 2 threads (llvm-mca puts the kernel's loop at 8.0 against 16.0 cycles a block of
# eight rows on Sapphire Rapids, mca.log; the dev VM at load 9-15 resolved nothing end to end; the 2-thread decode
# streams 143 MB a token at ~19 GB/s, where the old loop already ran ~3x faster than memory: expect +0-6%), branch/llama.cpp at 2/8/16 against issue
# #37's targets (tg128 >= 1.2 at 2, >= 1.0 at 8/16; pp512 >= 1.0 at 2/16), and which prefetch distance the next
# round should take (a variant > 5% below X in both sweeps).
set -u
K=${K:-.gpu/c37s30}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/tmp/c37s30w
RN=${RN:-8}; RM=${RM:-3}; LIMIT=${LIMIT:-470}
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/src && cd $W
tar -C $W/src -xJf $K/peers-src.tar.xz || exit 3
setsid bash -c "S=\$(date +%s); bash $K/build-peers.sh build $W/src $W/peers --cpu llama > $W/build.log 2>&1; echo \"\$? \$(( \$(date +%s) - S ))\" > $W/build.rc" < /dev/null > /dev/null 2>&1 &
for b in hark-main hark-br cpu-pf.test; do xz -dc $K/$b.xz > $b && chmod +x $b || exit 3; done
tar -xJf $K/smollm2.tar.xz || exit 3
./hark-br bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $W/smollm2 --pp 8 --tg 0 -r 1 -t 4 > /dev/null 2>&1
M=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
for i in $(seq 1 240); do [ -e build.rc ] && break; sleep 1; done
LB=$W/peers/bin/llama-bench
F=0
pin() { [ "$1" -ge 16 ] || echo "taskset -c $F-$(( F + $1 - 1 ))"; }
H() { local T=$1 r=$2 h=$3
  echo "RUN T=$T F=$F round=$r $h: $($(pin $T) ./$h bench llm --backend cpu --model $M -t $T -r 3 --pp 512 --tg 128 2>&1 | grep -E '^samples' | tr '\n' '|')"; }
L() { local T=$1 r=$2; [ -x $LB ] || { echo "NOPEER T=$T round=$r"; return; }
  echo "RUN T=$T F=$F round=$r llama: $($(pin $T) $LB -m $M -t $T -r 3 -p 512 -n 128 -o json 2>/dev/null | python3 -c '
import json,sys
for r in json.load(sys.stdin):
    t="pp512" if r["n_prompt"] else "tg128"
    print("samples llama %s t=%d t/s: %s"%(t,r["n_threads"]," ".join("%.2f"%x for x in r["samples_ts"])),end="|")')"; }
{ echo "== machine"; date -u; nproc; lscpu | grep -E 'Model name|Hypervisor|L3|Thread|Core|Socket|NUMA' | cut -c1-200; lscpu -e
  grep -o -E 'avx512[a-z_0-9]*|amx[a-z_0-9]*|avx_vnni' /proc/cpuinfo | sort -u | tr '\n' ' '; echo; cat /proc/loadavg; head -1 /proc/stat
  sha256sum hark-main hark-br $M; echo "llama.cpp build: exit and seconds $(cat build.rc 2>/dev/null || echo 'not finished')"; tail -3 build.log
  echo "== timed at $(el) s"
  for TF in 2:0 2:2 4:0 16:0 8:0; do
    T=${TF%:*}; F=${TF#*:}; n=$RN; [ $TF = 2:0 ] || n=$RM
    for r in $(seq 1 $n); do
      [ $(el) -lt $LIMIT ] || { echo "STOPPED at T=$T round $r, $(el) s"; break 2; }
      if [ $((r % 2)) = 1 ]; then H $T $r hark-main; H $T $r hark-br; L $T $r; else L $T $r; H $T $r hark-br; H $T $r hark-main; fi
    done
  done
  echo "== prefetch sweep at $(el) s"
  if [ $(el) -lt $((LIMIT + 60)) ]; then
    export PF_N=49152 PF_K=576 PF_MATS=5 PF_REPS=1
    taskset -c 0 ./cpu-pf.test -test.run TestPFCPU -test.v 2>&1 | grep cpu-us | sed 's/^ */one: /'
    taskset -c 0 ./cpu-pf.test -test.run TestPFCPU -test.v > pf0.log 2>&1 & taskset -c 1 ./cpu-pf.test -test.run TestPFCPU -test.v > pf1.log 2>&1; wait
    grep -h cpu-us pf0.log pf1.log | sed 's/^ */two: /'
    export PF_MATS=400 # 400 576x576 products (141 MB, the model's size) in 12-group chunks: the decode's streams
    taskset -c 0 ./cpu-pf.test -test.run TestPFChunks -test.v 2>&1 | grep cpu-us | sed 's/^ */one: /'
    taskset -c 0 ./cpu-pf.test -test.run TestPFChunks -test.v > pf0.log 2>&1 & taskset -c 1 ./cpu-pf.test -test.run TestPFChunks -test.v > pf1.log 2>&1; wait
    grep -h cpu-us pf0.log pf1.log | sed 's/^ */two: /'
  fi
  cat /proc/loadavg; head -1 /proc/stat; echo "== done at $(el) s"; } 2>&1 | tee $OUT/run.log
cp build.log $OUT/llama-build.log 2>/dev/null
python3 - $OUT/run.log <<'PY' | tee -a $OUT/run.log
import re,sys,collections,statistics as st
d=collections.defaultdict(dict); s0=[]
for l in open(sys.argv[1]):
    m=re.match(r'RUN T=(\d+) F=(\d+) round=(\d+) (\S+): (.*)',l)
    if m:
        for t,v in re.findall(r'(pp512|tg128) t=\d+ t/s: ([\d. ]+)',m[5]):
            d[((int(m[1]),int(m[2])),t,m[4])][int(m[3])]=st.mean(float(x) for x in v.split())
    if l.startswith('cpu '): s0.append([int(x) for x in l.split()[1:]])
if len(s0)==2:
    dl=[b-a for a,b in zip(*s0)]; tot=sum(dl) or 1
    print('cpu time over the call: user %.1f%% system %.1f%% idle %.1f%% iowait %.2f%% steal %.2f%%'%tuple(100*dl[i]/tot for i in (0,2,3,4,7)))
print('| T (first CPU) | test | main | branch | llama.cpp | branch/main (by round, median) | branch/llama.cpp (by round, median) | main/llama.cpp |')
for T in ((2,0),(2,2),(4,0),(8,0),(16,0)):
    for t in ('tg128','pp512'):
        a,b,c=(d[(T,t,h)] for h in ('hark-main','hark-br','llama'))
        if not b: continue
        med=lambda x: st.median(x.values()) if x else float('nan')
        pr=lambda x,y: st.median([x[r]/y[r] for r in x if r in y]) if x and y else float('nan')
        print('| %d (%d) | %s | %.1f | %.1f | %.1f | %.3f (%d) | %.3f | %.3f |'%(T[0],T[1],t,med(a),med(b),med(c),pr(b,a),len(b),pr(b,c),pr(a,c)))
PY
