#!/bin/bash
# Issue #34 round 20, call 2 (helper q34s29; STAGED, not run: the helper's device cap went to call 1).
# 1. llama.cpp WITH CUDA graphs. Call 1 found that build-peers.sh's llama.cpp runs without them: upstream llama.cpp's
#    top-level CMakeLists sets GGML_CUDA_GRAPHS_DEFAULT ON, and the fork's commit b1566523e ("prune: drop 12 ggml
#    backends") removed those lines, so ggml's default (OFF) applied to the anchors (2026-11-28), round 11 and call 1.
#    This call builds the same source (peers-src.tar.xz, call 1's) with -DGGML_CUDA_GRAPHS=ON and runs llama-bench
#    with graphs (upstream's default) and with GGML_CUDA_DISABLE_GRAPHS=1 (the anchors' form).
# 2. Tuning.AttnValuesEarly (branch q34s29 ea6b0a6: the _ve attention instances, the value rows loaded with the key
#    rows): the branch's binaries (-tags hark_nocubin: the branch's PTX JIT-compiled, ~85 s, beside the build),
#    HARK_CUDA_TUNE=AttnValuesEarly=2 against the default in one binary. Beside the build: msltest through CUDA
#    (TestRopeAttentionValuesEarly: the _ve kernels against the CPU and bit for bit against the plain ones;
#    TestRopeAttentionKernel, TestRopeAttentionMatVecQ8Activations and TestE2EStories under the device's tuning plus
#    AttnValuesEarly=2) and greedy md5s, default against AttnValuesEarly=2, in the normal, HARK_CUDA_PERMUTE=20261203
#    and HARK_CUDA_POISON=1 runs; Nsight Compute durations of the attention launches ~100 tokens in, both ways.
# After the build: 4 rounds, order rotated, of Hark default / Hark AttnValuesEarly=2 / llama-bench with graphs /
# llama-bench without, on the same 1B q8_0 and q4_0 files (tg128, -r 5), then one SmolLM2 round.
# From the lead's checkout root: K=.gpu/q34s29/c2 bash .gpu/q34s29/c2/call2.sh   ($K: hark.xz, msltest.test.xz,
# data.tar.xz, peers-src.tar.xz). Predicted: ~220-290 s build + ~100 s timed, ~330-400 s of script, plus the start.
set -u
K=${K:-.gpu/q34s29/c2}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/q34s29c2
el() { echo $(( $(date +%s) - S )); }
STOP=${STOP:-420}   # no timed run starts after this many seconds of script
mkdir -p $OUT $W/m $W/shared $W/src $W/v && cd $W
export PATH=$PATH:/usr/local/cuda/bin CUDA_CACHE_MAXSIZE=4294967296; unset HARK_CUDA_CUBIN_DIR
tar -C $W/src -xJf $K/peers-src.tar.xz
( t0=$(date +%s)
  cmake -S $W/src/llama -B $W/bl -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_CURL=OFF \
    -DLLAMA_OPENSSL=OFF -DGGML_CUDA=ON -DGGML_CUDA_GRAPHS=ON -DCMAKE_CUDA_ARCHITECTURES=90 > $W/v/build.log 2>&1
  echo "configured in $(( $(date +%s) - t0 )) s" >> $W/v/build.log
  cmake --build $W/bl -j 16 --target llama-bench >> $W/v/build.log 2>&1
  echo "build exit $? in $(( $(date +%s) - t0 )) s (script at $(el) s)" >> $W/v/build.log ) &
B=$!
for f in hark msltest.test; do xz -T4 -dc $K/$f.xz > $f && chmod +x $f; done
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared
TOK=$W/shared/llm-kit/tokenizers/smollm2; B1=$W/m/llama-1b-shape-v1-L16; M8=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
VE=AttnValuesEarly=2
{ ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 4
  ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 4; ls -la $W/m
  echo "files at $(el) s"; } > $OUT/write.log 2>&1
# beside the build: the JIT (the driver's cache serves every later process), tests, Nsight Compute
{ HARK_CUDA_STARTUP=1 ./hark bench llm --backend cuda --model $B1-q8_0.gguf -r 1 --pp 0 --tg 8 2>&1 | grep -vE '^  '
  echo "JIT done at $(el) s"; } > $OUT/jit.log 2>&1
MT='^Test(RopeAttentionValuesEarly|RopeAttentionKernel|RopeAttentionMatVecQ8Activations|E2EStories)$'
{ for m in normal permuted poison; do
    case $m in normal) E="X=1";; permuted) E="HARK_CUDA_PERMUTE=20261203";; poison) E="HARK_CUDA_POISON=1";; esac
    for f in q8_0 q4_0; do
      echo "$m 1B $f md5 default $(env $E ./hark generate --backend cuda --model $B1-$f.gguf --temp 0 --ignore-eos -n 64 'The quick brown fox' 2>/dev/null | md5sum | cut -c1-12) $VE $(env $E HARK_CUDA_TUNE=$VE ./hark generate --backend cuda --model $B1-$f.gguf --temp 0 --ignore-eos -n 64 'The quick brown fox' 2>/dev/null | md5sum | cut -c1-12) at $(el) s"
    done
    env $E HARK_CUDA_TUNE=$VE HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 150 ./msltest.test -test.run "$MT" -test.v -test.count=1 > v/msl-$m.v.log 2>&1
    echo "-- msltest $m ($E, $VE): exit $? at $(el) s, passed $(grep -c -- '--- PASS' v/msl-$m.v.log)"
    grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)|kernels run on|rope_attention: worst' v/msl-$m.v.log | cut -c1-300 | head -8
  done; } > $OUT/tests.log 2>&1
(cd v && tar -cf - *.v.log | xz -9 > $OUT/test-logs.tar.xz)
{ for c in 1 2; do
    echo "== ncu AttnValuesEarly=$c at $(el) s (attention launches 1601-1632: ~100 tokens into tg128)"
    HARK_CUDA_TUNE=AttnValuesEarly=$c HARK_CUDA_GRAPHS=0 timeout 60 ncu --clock-control none --print-units base --csv \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,launch__registers_per_thread -k 'regex:rope_attention_(group_)?f16' -s 1600 -c 32 \
      ./hark bench llm --backend cuda --model $B1-q8_0.gguf -r 1 --pp 0 --tg 128 > v/ncu$c.csv 2>/dev/null; echo "exit $?"
    python3 - v/ncu$c.csv <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
h = next(r for r in rows if 'Kernel Name' in r); ix = {k: h.index(k) for k in ('ID', 'Kernel Name', 'Metric Name', 'Metric Value')}
k = {}
for r in rows:
    if len(r) != len(h) or not r[ix['ID']].strip().isdigit(): continue
    k.setdefault(r[ix['ID']], {'name': r[ix['Kernel Name']].split('(')[0]})[r[ix['Metric Name']]] = float(r[ix['Metric Value']].replace(',', ''))
agg = collections.defaultdict(list)
for d in k.values(): agg[d['name']].append(d)
for n, ds in agg.items():
    us = [d.get('gpu__time_duration.sum', 0) / 1e3 for d in ds]
    print("%-44s n %3d  us/each %.2f (%.2f-%.2f)  KB read/each %.0f  regs %d" % (n, len(ds), sum(us) / len(us), min(us), max(us),
          sum(d.get('dram__bytes_read.sum', 0) for d in ds) / len(ds) / 1e3, ds[0].get('launch__registers_per_thread', 0)))
PY
  done; echo "== end at $(el) s"; } > $OUT/ncu.log 2>&1
wait $B; tail -3 $W/v/build.log > $OUT/build-tail.log; xz -9 -c $W/v/build.log > $OUT/build.log.xz
LB=$W/bl/bin/llama-bench; [ -x $LB ] || echo "NO llama-bench" >> $OUT/build-tail.log
run() { # label, round, file
  echo "== $1 $2 r$3 at $(el) s"
  case $1 in
    hark-default) ./hark bench llm --backend cuda --model $4 -r 5 --pp 0 --tg 128 2>&1 | grep -E 'tg128 \||^samples|copy|rror' ;;
    hark-ve) HARK_CUDA_TUNE=$VE ./hark bench llm --backend cuda --model $4 -r 5 --pp 0 --tg 128 2>&1 | grep -E 'tg128 \||^samples|copy|rror' ;;
    llama) [ -x $LB ] && $LB -m $4 -ngl 99 -r 5 -p 0 -n 128 2>&1 | grep -E '^\| .*tg|rror' ;;
    llamanograph) [ -x $LB ] && GGML_CUDA_DISABLE_GRAPHS=1 $LB -m $4 -ngl 99 -r 5 -p 0 -n 128 2>&1 | grep -E '^\| .*tg|rror' ;;
  esac; }
{ echo "timed from $(el) s; $(cat /proc/loadavg)"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  L=(hark-default llama hark-ve llamanograph)
  for r in 1 2 3 4; do for t in q8_0 q4_0; do
    [ $(el) -lt $STOP ] || { echo "SKIP r$r $t at $(el) s"; break 2; }
    for i in 0 1 2 3; do run ${L[$(( (i + r) % 4 ))]} 1B-$t $r $B1-$t.gguf; done
  done; done
  if [ $(el) -lt $((STOP + 20)) ]; then for l in hark-default hark-ve llama llamanograph; do run $l SmolLM2-q8_0 1 $M8; done; fi
  echo "timed end at $(el) s"; } > $OUT/bench.log 2>&1
python3 - $OUT/bench.log > $OUT/summary.txt <<'PY'
import re, sys, collections
d = collections.OrderedDict(); cur = None
for l in open(sys.argv[1]):
    m = re.match(r'== (\S+) (\S+) r(\d)', l)
    if m: cur = (m.group(2), m.group(1)); continue
    if cur and re.search(r'tg128 *\|', l):
        v = [x for x in (c.strip() for c in l.strip().strip('|').split('|')) if '±' in x]
        if v: d.setdefault(cur, []).append(float(v[0].split('±')[0]))
print("%-14s %-14s %s" % ("model", "prog", "rounds / mean / min-max"))
mean = {k: sum(v) / len(v) for k, v in d.items()}
for (t, p), v in sorted(d.items()):
    print("%-14s %-14s %s / %.1f / %.1f-%.1f" % (t, p, " ".join("%.1f" % x for x in v), mean[(t, p)], min(v), max(v)))
for t in sorted({t for t, _ in d}):
    for h in ('hark-default', 'hark-ve'):
        for p in ('llama', 'llamanograph'):
            if (t, h) in mean and (t, p) in mean:
                print("%s: %s / %s = %.3f (1.5x = %.1f)" % (t, h, p, mean[(t, h)] / mean[(t, p)], 1.5 * mean[(t, p)]))
    if (t, 'hark-ve') in mean and (t, 'hark-default') in mean:
        print("%s: AttnValuesEarly=2 / default = %.4f" % (t, mean[(t, 'hark-ve')] / mean[(t, 'hark-default')]))
PY
cat $OUT/build-tail.log; grep -E 'ready|JIT done' $OUT/jit.log; cat $OUT/tests.log; grep -vE '^exit' $OUT/ncu.log; cat $OUT/summary.txt; echo "end at $(el) s"
