#!/bin/bash
# Issue #37, twentieth session, branch mem20: the memory row with the default options (steps whole, no chunks; a
# prefill's scratch given back to the OS when the pass ends, engine/cpu/arena_release.go), and whether that costs
# pp512, pp32 or tg128 on the device's 16-core CPU. One call (about 3-4 minutes), from the repository root of the
# lead's checkout:
#   bash .gpu/mem20/device.sh            (K=.gpu/mem20 by default; logs to $OUT)
# Carry .gpu/mem20 (named in `carry`; staged there by the helper), holding this script and, built on the dev machine:
#   hark-main.xz    bench/cpu/build-hark.sh d4c8e5c hark-main.xz        (main)
#   hark-mem20.xz   bench/cpu/build-hark.sh HEAD hark-mem20.xz          (this branch; the commit is in $OUT/machine.log's
#                                                                        sha256 and the staging note, stage.txt)
#   cpu.test.xz     CGO_ENABLED=0 go test -c -trimpath -ldflags='-s -w' -o cpu.test ./engine/cpu at HEAD, xz -T2
#   smollm2.tar.xz  tar -C ../shared/llm-kit/tokenizers -cJf smollm2.tar.xz smollm2   (the tokenizer the GGUF files take)
# What it runs:
#   1. memory.log: cpu.test -test.run 'TestPackedModelMemory$' twice (it writes its own SmolLM2-135M-shaped q8_0 file
#      and measures, in a child process, VmRSS added by loading it and one pp512 + tg128 with New(Options{Threads: 2}),
#      against 1.05 x (file + KV) = 164.4 MB; the log has the breakdown), then TestDroppedScratchExact once (the
#      given-back pages: logits and KV bit for bit against an executor that keeps them, decode allocation-free);
#   2. timed-t16.log, timed-t2.log: hark bench llm pp512 + tg128 -r 3 on the SmolLM2-135M-shaped q8_0 file, main and
#      mem20 alternated (the order swapped each round), 3 rounds at 16 threads, then 3 at 2 threads pinned with
#      taskset -c 0-1, bash time's user and sys CPU after each run;
#   3. timed-pp32-t16.log, timed-pp32-t2.log: the same rounds, pp32 -r 20 --tg 0 (each prefill faulting its pages in
#      again: where that costs most, relatively);
#   4. bench.log: cpu.test's BenchmarkDroppedPrefill (pp512 and pp32, an executor that gives its scratch back against
#      one that keeps it, alternated prefill by prefill in one process: medians of wall and system CPU ms a prefill),
#      40 pairs each, with every core's worker (16) and pinned to cores 0-1 (2).
# Medians: bench/cpu/20261201-chunk37/summarize.sh LOG (PP=32 for the pp32 logs, as of branch mem20).
# A trial with the loops cut: ROUNDS=1 REPS=1 THREADS=2 bash device.sh
set -u
K=${K:-.gpu/mem20}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; W=${W:-/tmp/w20}; S=$(date +%s)
ROUNDS=${ROUNDS:-3}; REPS=${REPS:-3}; THREADS=${THREADS:-16 2}
el() { echo $(( $(date +%s) - S )); }
mkdir -p "$OUT" $W/m $W/td/llm-kit/tokenizers && cd $W
{ echo "== machine"; date -u; uname -r; nproc; lscpu | grep -E 'Model name|Socket|Core|Thread|NUMA node0|Hypervisor'
  grep -o -w -E 'avx2|avx512f|avx512_vnni|avx512_bf16|amx_tile|amx_int8' /proc/cpuinfo | sort | uniq -c
  echo "THP $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
  ldconfig -p | grep -i -E 'openblas|libblas' | head -3; cat /proc/loadavg; cat "$K/stage.txt"; } > "$OUT/machine.log" 2>&1
for b in hark-main hark-mem20 cpu.test; do xz -dc "$K/$b.xz" > $W/$b && chmod +x $W/$b; done
tar -C $W/td/llm-kit/tokenizers -xJf "$K/smollm2.tar.xz"
sha256sum $W/hark-main $W/hark-mem20 $W/cpu.test >> "$OUT/machine.log"
# the model file (hark bench llm writes it, random weights)
$W/hark-mem20 bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $W/td/llm-kit/tokenizers/smollm2 --pp 8 --tg 0 -r 1 -t 4 > "$OUT/write.log" 2>&1
M8=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
{ echo "== memory at $(el) s; $(cat /proc/loadavg)"
  for r in 1 2; do
    HARK_TESTDATA=$W/td $W/cpu.test -test.run 'TestPackedModelMemory$' -test.v -test.count=1 2>&1 | grep -E 'memory_linux_test|PASS|FAIL|ok'
  done
  HARK_TESTDATA=$W/td $W/cpu.test -test.run 'TestDroppedScratchExact$' -test.v -test.count=1 2>&1 | grep -E -- '--- |Error|PASS|FAIL|ok'
} > "$OUT/memory.log" 2>&1
pin() { [ "$1" -ge 16 ] || echo "taskset -c 0-$(( $1 - 1 ))"; }
# timed LOG T ARGS...: ROUNDS rounds of both binaries, the order swapped each round
timed() {
  local log=$1 T=$2 P; shift 2; P=$(pin $T)
  { echo "== timed T=$T $* at $(el) s; $(cat /proc/loadavg)"
    for round in $(seq $ROUNDS); do
      order="hark-main hark-mem20"; [ $((round % 2)) = 0 ] && order="hark-mem20 hark-main"
      for b in $order; do
        echo "== round $round $b T=$T $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
        TIMEFORMAT="TIME $b user %U sys %S wall %R"
        { time $P $W/$b bench llm --backend cpu --model $M8 -t $T "$@" 2>&1 | grep -E 'samples'; } 2>&1
      done
    done
    echo "== done at $(el) s"; } > "$OUT/$log" 2>&1
}
for T in $THREADS; do
  timed timed-t$T.log $T -r $REPS --pp 512 --tg 128
  timed timed-pp32-t$T.log $T -r $((REPS * 20 / 3)) --pp 32 --tg 0
done
for T in $THREADS; do
  echo "== BenchmarkDroppedPrefill, $(pin $T) (default workers) at $(el) s; $(cat /proc/loadavg)"
  HARK_TESTDATA=$W/td $(pin $T) $W/cpu.test -test.run '^$' -test.bench 'DroppedPrefill' -test.benchtime $((REPS * 40 / 3))x 2>&1 | grep -E 'Benchmark|ok|FAIL'
done > "$OUT/bench.log" 2>&1
cat "$OUT/machine.log" "$OUT/memory.log" "$OUT"/timed-*.log "$OUT/bench.log"
