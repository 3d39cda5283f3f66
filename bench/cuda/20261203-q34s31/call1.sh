#!/bin/bash
# Issue #34 round 21, call 1 (helper q34s31, H200): Hark's tg128 against llama.cpp built WITH CUDA graphs in the same call.
# llama.cpp: /work/peers-llama-src.tar.xz (build-peers.sh prepare's llama/ tree: the fork Raudbjorn/ggml-llama.cpp
# ae1a0b1c7 on whisper.cpp 233fe1fc9's ggml, with the shims) plus the fork's tools/batched-bench, tools/CMakeLists.txt
# naming llama-bench and batched-bench (peers-src.tar.xz, 3.3 MB). Built with build-peers.sh's cmake line plus
# -DGGML_CUDA_GRAPHS=ON (upstream's GGML_CUDA_GRAPHS_DEFAULT, which the fork dropped) and sm_90 only, targets
# llama-bench and llama-batched-bench, -j 16. Beside the build (2 single-threaded processes): the files
# (`hark bench llm --backend cpu --shape llama-1b --type q8_0,q4_0` and the SmolLM2 shape's q8_0,q4_0,f16) and one
# short CUDA start-up check. After the build: rounds, order rotated, of Hark (`hark bench llm --backend cuda -r 5 --pp 0
# --tg 128`, main 1a5885c, embedded cubins), llama-bench with graphs and llama-bench with GGML_CUDA_DISABLE_GRAPHS=1
# (`-ngl 99 -r 5 -p 0 -n 128`) on 1B q8_0/q4_0 and SmolLM2 q8_0/q4_0/f16; llama-batched-bench with graphs on the
# SmolLM2 q8_0 file (the anchor e-llama-batched.log's flags) after round 1; a gate stops new runs at $STOP s.
# From the lead's checkout root: K=.gpu/q34s31 bash .gpu/q34s31/call.sh   ($K: hark.xz, tok.tar.xz, peers-src.tar.xz)
set -u
K=${K:-.gpu/q34s31}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/q34s31
el() { echo $(( $(date +%s) - S )); }
STOP=${STOP:-280}   # no timed trio starts after this many seconds of script
mkdir -p $OUT $W/m $W/tok $W/src $W/v && cd $W
export PATH=$PATH:/usr/local/cuda/bin
tar -C $W/src -xJf $K/peers-src.tar.xz
( t0=$(date +%s)
  cmake -S $W/src/llama -B $W/bl -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_CURL=OFF \
    -DLLAMA_OPENSSL=OFF -DGGML_CUDA=ON -DGGML_CUDA_GRAPHS=ON -DCMAKE_CUDA_ARCHITECTURES=90 > $W/v/build.log 2>&1
  echo "configured in $(( $(date +%s) - t0 )) s" >> $W/v/build.log
  grep -E 'GGML_CUDA_GRAPHS|GGML_CUDA_FA|CMAKE_CUDA_ARCH' $W/bl/CMakeCache.txt >> $W/v/build.log
  timeout 330 cmake --build $W/bl -j 16 --target llama-bench llama-batched-bench -- -k 0 >> $W/v/build.log 2>&1
  echo "build exit $? in $(( $(date +%s) - t0 )) s (script at $(el) s)" >> $W/v/build.log ) &
B=$!
xz -T4 -dc $K/hark.xz > hark && chmod +x hark
tar -C $W/tok -xJf $K/tok.tar.xz
TOK=$W/tok/smollm2; B1=$W/m/llama-1b-shape-v1-L16; SM=$W/m/smollm2-135m-shape-v1-L30
( ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 1 --tg 0 -r 1 -t 1 > $W/v/w1.log 2>&1; echo "1B files at $(el) s" >> $W/v/w1.log ) &
W1=$!
./hark bench llm --backend cpu --dir $W/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 1 --tg 0 -r 1 -t 1 > $W/v/w2.log 2>&1; echo "SmolLM2 files at $(el) s" >> $W/v/w2.log
{ HARK_CUDA_STARTUP=1 timeout 60 ./hark bench llm --backend cuda --model $SM-q8_0.gguf -r 1 --pp 0 --tg 16 2>&1 | grep -vE '^  ' | cut -c1-300 | head -40
  echo "check done at $(el) s"; } > $OUT/check.log 2>&1
wait $W1; { cat $W/v/w1.log $W/v/w2.log | grep -E '^\||files at'; ls -la $W/m; } > $OUT/write.log 2>&1
wait $B; tail -4 $W/v/build.log > $OUT/build-tail.log; xz -9 -c $W/v/build.log > $OUT/build.log.xz
LB=$W/bl/bin/llama-bench; BB=$W/bl/bin/llama-batched-bench
for f in $LB $BB; do [ -x $f ] || echo "MISSING $f" >> $OUT/build-tail.log; done
run() { # prog, label, round, file
  echo "== $1 $2 r$3 at $(el) s"
  case $1 in
    hark) timeout 40 ./hark bench llm --backend cuda --model $4 -r 5 --pp 0 --tg 128 2>&1 | grep -E 'tg128 \||^samples|copy|rror' ;;
    llama) [ -x $LB ] && timeout 40 $LB -m $4 -ngl 99 -r 5 -p 0 -n 128 2>&1 | grep -E '^\| (model|.*tg128)|rror' ;;
    llamanograph) [ -x $LB ] && GGML_CUDA_DISABLE_GRAPHS=1 timeout 40 $LB -m $4 -ngl 99 -r 5 -p 0 -n 128 2>&1 | grep -E '^\| .*tg128|rror' ;;
  esac; }
batched() { # env
  echo "== batched $1 at $(el) s"
  [ -x $BB ] && env $1 timeout 45 $BB -m $SM-q8_0.gguf -ngl 99 -c 16384 -b 2048 -ub 512 -npp 128 -ntg 128 -npl 1,2,4,8,16,32 2>&1 | grep -E '^\||rror'
  echo "== batched end at $(el) s"; }
{ echo "timed from $(el) s; load $(cat /proc/loadavg)"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  timeout 30 ./hark bench llm --backend cuda --model $B1-q8_0.gguf -r 1 --pp 0 --tg 128 > /dev/null 2>&1; echo "warm-up done at $(el) s"
  L=(hark llama llamanograph); F=(1B-q8_0:$B1-q8_0 1B-q4_0:$B1-q4_0 SmolLM2-q8_0:$SM-q8_0 SmolLM2-q4_0:$SM-q4_0 SmolLM2-f16:$SM-f16)
  done=0
  for r in 1 2 3 4; do
    for x in "${F[@]}"; do
      [ $(el) -lt $STOP ] || { echo "SKIP r$r ${x%%:*} at $(el) s"; done=1; break; }
      for i in 0 1 2; do run ${L[$(( (i + r - 1) % 3 ))]} ${x%%:*} $r ${x#*:}.gguf; done
    done
    if [ $r = 1 ] && [ $(el) -lt $((STOP + 12)) ]; then batched X=1; fi
    if [ $r = 2 ] && [ $(el) -lt $STOP ]; then batched GGML_CUDA_DISABLE_GRAPHS=1; fi
    [ $done = 1 ] && break
  done
  echo "timed end at $(el) s"; } > $OUT/bench.log 2>&1
python3 - $OUT/bench.log > $OUT/summary.txt <<'PY'
import re, sys, collections
d = collections.OrderedDict(); bw = collections.defaultdict(list); cp = []; cur = None
for l in open(sys.argv[1]):
    m = re.match(r'== (hark|llama|llamanograph) (\S+) r(\d)', l)
    if m: cur = (m.group(2), m.group(1)); continue
    m = re.search(r'copy ([\d.]+) GB/s', l)
    if m: cp.append(float(m.group(1)))
    if cur and re.search(r'tg128 *\|', l):
        c = [x.strip() for x in l.strip().strip('|').split('|')]
        v = [i for i, x in enumerate(c) if '±' in x]
        if v:
            d.setdefault(cur, []).append(float(c[v[0]].split('±')[0]))
            if cur[1] == 'hark' and v[0] + 1 < len(c): bw[cur[0]].append(float(c[v[0] + 1]))
mean = {k: sum(v) / len(v) for k, v in d.items()}
print("%-14s %-13s %s" % ("model", "prog", "rounds / mean / min-max"))
for (t, p), v in d.items():
    print("%-14s %-13s %s / %.1f / %.1f-%.1f" % (t, p, " ".join("%.1f" % x for x in v), mean[(t, p)], min(v), max(v)))
for t in dict.fromkeys(t for t, _ in d):
    for p in ('llama', 'llamanograph'):
        if (t, 'hark') in mean and (t, p) in mean:
            print("%s: hark / %s = %.3f (1.5x = %.1f)" % (t, p, mean[(t, 'hark')] / mean[(t, p)], 1.5 * mean[(t, p)]))
    if bw[t] and cp:
        b = sum(bw[t]) / len(bw[t]); c = sum(cp) / len(cp)
        print("%s: hark weights %.1f GB/s, copy %.1f GB/s (n %d, %.1f-%.1f): %.1f%%" % (t, b, c, len(cp), min(cp), max(cp), 100 * b / c))
PY
cat $OUT/build-tail.log; grep -E 'kernels|cubin|check done|rror' $OUT/check.log | head -5; grep 'files at' $OUT/write.log
grep -A9 '== batched' $OUT/bench.log; cat $OUT/summary.txt; echo "end at $(el) s"
