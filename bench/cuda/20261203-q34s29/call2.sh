#!/bin/bash
# Issue #34 round 20, call 2 (helper q34s29; STAGED, not run: the helper's device cap went to call 1). Call 1 found
# that build-peers.sh's llama.cpp runs WITHOUT CUDA graphs: upstream llama.cpp's top-level CMakeLists sets
# GGML_CUDA_GRAPHS_DEFAULT ON, and the fork's commit b1566523e ("prune: drop 12 ggml backends") removed those lines,
# so ggml's own default (OFF) applied to the anchors (2026-11-28), round 11 and call 1. This call builds the same
# source with -DGGML_CUDA_GRAPHS=ON (upstream's default) and runs llama-bench with graphs (the default) and with
# GGML_CUDA_DISABLE_GRAPHS=1 (the anchors' llama.cpp), alternated with Hark's tg128 on the same 1B q8_0 / q4_0
# files, 5 rounds, order rotated. Nothing but the file writing runs beside the build (call 1's GPU work beside it
# took the build from ~200 to 290 s and disturbed its profile). From the lead's checkout root:
#   K=.gpu/q34s29/c1 bash .gpu/q34s29/c1/call2.sh     ($K: hark.xz, data.tar.xz, peers-src.tar.xz as call 1's)
# Predicted: ~200-290 s build + ~90 s timed = ~300-380 s of script, plus the machine's start.
set -u
K=${K:-.gpu/q34s29/c1}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/q34s29
el() { echo $(( $(date +%s) - S )); }
STOP=${STOP:-400}   # no timed run starts after this many seconds of script
mkdir -p $OUT $W/m $W/shared $W/src $W/v && cd $W
export PATH=$PATH:/usr/local/cuda/bin CUDA_CACHE_MAXSIZE=4294967296
tar -C $W/src -xJf $K/peers-src.tar.xz
( t0=$(date +%s)
  cmake -S $W/src/llama -B $W/bl -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_CURL=OFF \
    -DLLAMA_OPENSSL=OFF -DGGML_CUDA=ON -DGGML_CUDA_GRAPHS=ON -DCMAKE_CUDA_ARCHITECTURES=90 > $W/v/build.log 2>&1
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
  echo "pre done at $(el) s"; } > $OUT/pre.log 2>&1
wait $B; tail -3 $W/v/build.log > $OUT/build-tail.log; xz -9 -c $W/v/build.log > $OUT/build.log.xz
LB=$W/bl/bin/llama-bench; [ -x $LB ] || echo "NO llama-bench" >> $OUT/build-tail.log
hk() { echo "== hark $1 r$2 at $(el) s"; ./hark bench llm --backend cuda --model $3 -r 5 --pp 0 --tg 128 2>&1 | grep -E 'tg128 \||^samples|copy|rror'; }
lb() { echo "== llama $1 r$2 at $(el) s"; $LB -m $3 -ngl 99 -r 5 -p 0 -n 128 2>&1 | grep -E '^\| .*tg|rror'; }
lg() { echo "== llamanograph $1 r$2 at $(el) s"; GGML_CUDA_DISABLE_GRAPHS=1 $LB -m $3 -ngl 99 -r 5 -p 0 -n 128 2>&1 | grep -E '^\| .*tg|rror'; }
{ echo "timed from $(el) s; $(cat /proc/loadavg)"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  for r in 1 2 3 4 5; do for t in q8_0 q4_0; do
    [ $(el) -lt $STOP ] || { echo "SKIP r$r $t at $(el) s"; break 2; }
    case $((r % 3)) in
      1) hk 1B-$t $r $B1-$t.gguf; [ -x $LB ] && { lb 1B-$t $r $B1-$t.gguf; lg 1B-$t $r $B1-$t.gguf; } ;;
      2) [ -x $LB ] && { lg 1B-$t $r $B1-$t.gguf; lb 1B-$t $r $B1-$t.gguf; }; hk 1B-$t $r $B1-$t.gguf ;;
      0) [ -x $LB ] && lb 1B-$t $r $B1-$t.gguf; hk 1B-$t $r $B1-$t.gguf; [ -x $LB ] && lg 1B-$t $r $B1-$t.gguf ;;
    esac
  done; done
  if [ $(el) -lt $((STOP + 15)) ]; then echo "== SmolLM2 q8_0"; hk SmolLM2-q8_0 1 $M8; [ -x $LB ] && { lb SmolLM2-q8_0 1 $M8; lg SmolLM2-q8_0 1 $M8; }; fi
  echo "timed end at $(el) s"; } > $OUT/bench.log 2>&1
python3 - $OUT/bench.log > $OUT/summary.txt <<'PY'
import re, sys, collections
d = collections.OrderedDict(); cur = None
for l in open(sys.argv[1]):
    m = re.match(r'== (hark|llama|llamanograph) (\S+) r(\d)', l)
    if m: cur = (m.group(2), m.group(1)); continue
    if cur and re.search(r'tg128 *\|', l):
        c = [x.strip() for x in l.strip().strip('|').split('|')]
        v = [x for x in c if '±' in x]
        if v: d.setdefault(cur, []).append(float(v[0].split('±')[0]))
print("%-14s %-6s %s" % ("model", "prog", "rounds / mean / min-max"))
for (t, p), v in d.items():
    print("%-14s %-6s %s / %.1f / %.1f-%.1f" % (t, p, " ".join("%.1f" % x for x in v), sum(v) / len(v), min(v), max(v)))
for t in sorted({t for t, _ in d}):
    for p in ('llama', 'llamanograph'):
        if (t, 'hark') in d and (t, p) in d:
            h = sum(d[(t, 'hark')]) / len(d[(t, 'hark')]); g = sum(d[(t, p)]) / len(d[(t, p)])
            print("%s: hark / %s = %.3f (1.5x = %.1f)" % (t, p, h / g, 1.5 * g))
PY
cat $OUT/build-tail.log; grep -E 'kernels|tg8 \||md5' $OUT/pre.log; cat $OUT/summary.txt; echo "end at $(el) s"
