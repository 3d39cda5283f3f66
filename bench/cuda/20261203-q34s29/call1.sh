#!/bin/bash
# Issue #34 round 20, call 1 (helper q34s29, H200): the 1B shape's tg128 against llama.cpp built in the SAME call.
# llama.cpp: the fork on whisper.cpp's ggml (build-peers.sh prepare of whisper.cpp 233fe1fc9 + Raudbjorn/ggml-llama.cpp
# ae1a0b1c7, llama tree only, other GPU backends removed: peers-src.tar.xz, 2.0 MB), built here with build-peers.sh's
# cmake lines but -DCMAKE_CUDA_ARCHITECTURES=90, target llama-bench only, -j16, timed (prediction: ~190-210 s, round
# 11's build of the same source took 199 s on 16 cores). While it builds (CPU), the GPU is idle, so the script writes
# the files and takes what needs no clean timing: the cubin/JIT check, greedy md5s (against call3's), the graphs-off
# per-kernel profile and Nsight Compute durations of two late tg128 tokens. After the build: 5 rounds, alternated
# (odd rounds Hark first, even rounds llama.cpp first), of Hark `hark bench llm --backend cuda -r 5 --pp 0 --tg 128`
# and `llama-bench -ngl 99 -r 5 -p 0 -n 128` on the same llama-1b-shape q8_0 and q4_0 files, then one round on the
# SmolLM2 shape if time is left. From the lead's checkout root: K=.gpu/q34s29/c1 bash $K/call1.sh; $K holds hark.xz
# (main's hark, embedded cubins), data.tar.xz (the SmolLM2 tokenizer) and peers-src.tar.xz.
set -u
K=${K:-.gpu/q34s29/c1}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/q34s29
el() { echo $(( $(date +%s) - S )); }
STOP=${STOP:-300}   # no timed run starts after this many seconds of script
mkdir -p $OUT $W/m $W/shared $W/src $W/v && cd $W
export PATH=$PATH:/usr/local/cuda/bin CUDA_CACHE_MAXSIZE=4294967296
tar -C $W/src -xJf $K/peers-src.tar.xz
( t0=$(date +%s)
  cmake -S $W/src/llama -B $W/bl -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_CURL=OFF \
    -DLLAMA_OPENSSL=OFF -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 > $W/v/build.log 2>&1
  echo "configured in $(( $(date +%s) - t0 )) s" >> $W/v/build.log
  cmake --build $W/bl -j 16 --target llama-bench >> $W/v/build.log 2>&1
  echo "build exit $? in $(( $(date +%s) - t0 )) s (script at $(el) s)" >> $W/v/build.log ) &
B=$!
xz -T4 -dc $K/hark.xz > hark && chmod +x hark
tar -C $W/shared -xJf $K/data.tar.xz
TOK=$W/shared/llm-kit/tokenizers/smollm2; B1=$W/m/llama-1b-shape-v1-L16; M8=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
{ ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 4
  ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 4; ls -la $W/m
  echo "files at $(el) s"; } > $OUT/write.log 2>&1
# during the build: the kernels' source (cubin or JIT), greedy tokens, profile, Nsight Compute
{ HARK_CUDA_STARTUP=1 ./hark bench llm --backend cuda --model $B1-q8_0.gguf -r 1 --pp 0 --tg 8 2>&1 | grep -vE '^  '
  echo "JIT/cubin check done at $(el) s"
  for f in q8_0 q4_0; do
    echo "1B $f greedy md5 $(./hark generate --backend cuda --model $B1-$f.gguf --temp 0 --ignore-eos -n 64 'The quick brown fox' 2>/dev/null | md5sum | cut -c1-12) (call3: q8_0 a535f99fa6b1, q4_0 ef19e3fc65d8)"
  done
  for f in q8_0 q4_0; do
    echo "== 1B $f profile, graphs off, at $(el) s (during the build)"
    HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $B1-$f.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -vE '^\| ---|^\| model'
  done
  echo "ncu at $(el) s"; } > $OUT/pre.log 2>&1
L=$(grep -m1 -E 'cuda tg128: .* kernel launches' $OUT/pre.log | sed -E 's/.* ([0-9]+) kernel launches.*/\1/'); L=$(( ${L:-12544} / 128 ))
echo "launches a token (graphs off): $L; skipping $((L*100)), profiling $((L*2))" > $OUT/ncu.log
HARK_CUDA_GRAPHS=0 timeout 90 ncu --clock-control none --print-units base --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum,launch__registers_per_thread \
  -s $((L*100)) -c $((L*2)) ./hark bench llm --backend cuda --model $B1-q8_0.gguf -r 1 --pp 0 --tg 128 > $W/v/ncu.csv 2> $W/v/ncu.err
echo "ncu exit $? at $(el) s" >> $OUT/ncu.log
python3 - $W/v/ncu.csv >> $OUT/ncu.log 2>&1 <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
h = next(r for r in rows if 'Kernel Name' in r); ix = {k: h.index(k) for k in ('ID', 'Kernel Name', 'Metric Name', 'Metric Value', 'Grid Size', 'Block Size')}
k = {}
for r in rows:
    if len(r) != len(h) or not r[ix['ID']].strip().isdigit(): continue
    d = k.setdefault(r[ix['ID']], {'name': r[ix['Kernel Name']].split('(')[0], 'grid': r[ix['Grid Size']], 'block': r[ix['Block Size']]})
    d[r[ix['Metric Name']]] = float(r[ix['Metric Value']].replace(',', ''))
agg = collections.OrderedDict()
for d in k.values():
    a = agg.setdefault(d['name'], [0, 0.0, 0.0, d.get('launch__registers_per_thread', 0), d['grid'], d['block']])
    a[0] += 1; a[1] += d.get('gpu__time_duration.sum', 0) / 1e3; a[2] += d.get('dram__bytes_read.sum', 0)
tot = sum(a[1] for a in agg.values())
print("%d launches, %.1f us of kernels (2 tokens; a token %.1f us)" % (len(k), tot, tot / 2))
print("%-48s %6s %9s %8s %9s %5s %s" % ("kernel", "n", "us", "us/each", "GB/s", "regs", "grid x block"))
for n, a in sorted(agg.items(), key=lambda x: -x[1][1]):
    print("%-48s %6d %9.1f %8.2f %9.0f %5d %s x %s" % (n[:48], a[0], a[1], a[1] / a[0], a[2] / (a[1] * 1e3) if a[1] else 0, a[3], a[4], a[5]))
PY
tail -3 $W/v/ncu.err >> $OUT/ncu.log
wait $B; tail -3 $W/v/build.log > $OUT/build-tail.log; xz -9 -c $W/v/build.log > $OUT/build.log.xz
LB=$W/bl/bin/llama-bench; [ -x $LB ] || echo "NO llama-bench" >> $OUT/build-tail.log
hk() { echo "== hark $1 r$2 at $(el) s"; ./hark bench llm --backend cuda --model $3 -r 5 --pp 0 --tg 128 2>&1 | grep -E 'tg128 \||^samples|copy|rror'; }
lb() { echo "== llama $1 r$2 at $(el) s"; $LB -m $3 -ngl 99 -r 5 -p 0 -n 128 2>&1 | grep -E '^\| .*tg|rror'; }
{ echo "timed from $(el) s; $(cat /proc/loadavg)"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  for r in 1 2 3 4 5; do for t in q8_0 q4_0; do
    [ $(el) -lt $STOP ] || { echo "SKIP r$r $t at $(el) s"; break 2; }
    if [ $((r % 2)) = 1 ]; then hk 1B-$t $r $B1-$t.gguf; [ -x $LB ] && lb 1B-$t $r $B1-$t.gguf
    else [ -x $LB ] && lb 1B-$t $r $B1-$t.gguf; hk 1B-$t $r $B1-$t.gguf; fi
  done; done
  if [ $(el) -lt $((STOP + 15)) ]; then echo "== SmolLM2 q8_0"; hk SmolLM2-q8_0 1 $M8; [ -x $LB ] && lb SmolLM2-q8_0 1 $M8; fi
  echo "timed end at $(el) s"; } > $OUT/bench.log 2>&1
python3 - $OUT/bench.log > $OUT/summary.txt <<'PY'
import re, sys, collections
d = collections.OrderedDict(); cur = None
for l in open(sys.argv[1]):
    m = re.match(r'== (hark|llama) (\S+) r(\d)', l)
    if m: cur = (m.group(2), m.group(1)); continue
    if cur and re.search(r'tg128 *\|', l):
        c = [x.strip() for x in l.strip().strip('|').split('|')]
        v = [x for x in c if '±' in x]
        if v: d.setdefault(cur, []).append(float(v[0].split('±')[0]))
print("%-14s %-6s %s" % ("model", "prog", "rounds / mean / min-max"))
for (t, p), v in d.items():
    print("%-14s %-6s %s / %.1f / %.1f-%.1f" % (t, p, " ".join("%.1f" % x for x in v), sum(v) / len(v), min(v), max(v)))
for t in sorted({t for t, _ in d}):
    if (t, 'hark') in d and (t, 'llama') in d:
        h = sum(d[(t, 'hark')]) / len(d[(t, 'hark')]); g = sum(d[(t, 'llama')]) / len(d[(t, 'llama')])
        print("%s: hark / llama.cpp = %.3f (1.5x llama.cpp = %.1f)" % (t, h / g, 1.5 * g))
PY
cat $OUT/build-tail.log; grep -E 'kernels|tg8 \||md5' $OUT/pre.log; grep -E 'profile:' $OUT/pre.log; head -14 $OUT/ncu.log; cat $OUT/summary.txt; echo "end at $(el) s"
