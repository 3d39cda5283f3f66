#!/bin/bash
# Issue #37, nineteenth session, branch pp37b: the model at <= 1.05 x (file + KV) by default (prefill in chunks of rows,
# the norms, SiLU·up and RopeKV inside their products' jobs), and whether it costs pp512 or tg128 on the device's
# 16-core CPU. One call (about 5 minutes), from the repository root of the lead's checkout:
#   bash .gpu/pp37b/device.sh            (K=.gpu/pp37b by default; logs to $OUT)
# Carry .gpu/pp37b (named in `carry`; 16.3 MB, staged there by the helper), holding this script and, built on the dev
# machine:
#   hark-main.xz    bench/cpu/build-hark.sh 3d3a2c5 hark-main.xz        (main: whole steps by default)
#   hark-pp37b.xz   bench/cpu/build-hark.sh b787449 hark-pp37b.xz        (this branch: chunks of rows by default)
#   cpu.test.xz     CGO_ENABLED=0 go test -c -trimpath -ldflags='-s -w' -o cpu.test ./engine/cpu at b787449, xz -T2
#   smollm2.tar.xz  tar -C ../shared/llm-kit/tokenizers -cJf smollm2.tar.xz smollm2   (the tokenizer the GGUF files take)
# What it runs:
#   1. the memory row: cpu.test -test.run 'TestPackedModelMemory$' -test.v (it writes its own SmolLM2-135M-shaped q8_0
#      file and measures, in a child process, VmRSS added by loading it and one pp512 + tg128 with New's default
#      options, against 1.05 x (file + KV)), twice;
#   2. the A/B: hark bench llm pp512 + tg128 -r 3 on the SmolLM2-135M-shaped q8_0 file, main and pp37b alternated
#      (the order swapped each round), 3 rounds at 16 threads, then 3 at 2 threads pinned with taskset -c 0-1,
#      bash time's user CPU after each run (the rules of bench/cpu/20261201-s18/table.sh); logs timed-t16.log, timed-t2.log.
# Medians: bench/cpu/20261201-chunk37/summarize.sh LOG.
set -u
K=${K:-.gpu/pp37b}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; W=/tmp/w37b; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p "$OUT" $W/m $W/td/llm-kit/tokenizers && cd $W
{ echo "== machine"; date -u; uname -r; nproc; lscpu | grep -E 'Model name|Socket|Core|Thread|NUMA node0|Hypervisor'
  grep -o -w -E 'avx2|avx512f|avx512_vnni|avx512_bf16|amx_tile|amx_int8' /proc/cpuinfo | sort | uniq -c
  ldconfig -p | grep -i -E 'openblas|libblas' | head -3; cat /proc/loadavg; } > "$OUT/machine.log" 2>&1
for b in hark-main hark-pp37b cpu.test; do xz -dc "$K/$b.xz" > $W/$b && chmod +x $W/$b; done
tar -C $W/td/llm-kit/tokenizers -xJf "$K/smollm2.tar.xz"
sha256sum $W/hark-main $W/hark-pp37b $W/cpu.test >> "$OUT/machine.log"
# the model file (hark bench llm writes it, random weights, as table.sh's llm part does)
$W/hark-pp37b bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $W/td/llm-kit/tokenizers/smollm2 --pp 8 --tg 0 -r 1 -t 4 > "$OUT/write.log" 2>&1
M8=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
{ echo "== memory at $(el) s; $(cat /proc/loadavg)"
  for r in 1 2; do
    HARK_TESTDATA=$W/td $W/cpu.test -test.run 'TestPackedModelMemory$' -test.v -test.count=1 2>&1 | grep -E 'memory_linux_test|PASS|FAIL|ok'
  done; } > "$OUT/memory.log" 2>&1
pin() { [ "$1" -ge 16 ] || echo "taskset -c 0-$(( $1 - 1 ))"; }
for T in 16 2; do P=$(pin $T)
  { echo "== timed T=$T at $(el) s; $(cat /proc/loadavg)"
    for round in 1 2 3; do
      order="hark-main hark-pp37b"; [ $((round % 2)) = 0 ] && order="hark-pp37b hark-main"
      for b in $order; do
        echo "== round $round $b T=$T $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
        TIMEFORMAT="TIME $b user %U sys %S wall %R"
        { time $P $W/$b bench llm --backend cpu --model $M8 -t $T -r 3 --pp 512 --tg 128 2>&1 | grep -E 'samples'; } 2>&1
      done
    done
    echo "== done at $(el) s"; } > "$OUT/timed-t$T.log" 2>&1
done
cat "$OUT/machine.log" "$OUT/memory.log" "$OUT"/timed-t*.log
