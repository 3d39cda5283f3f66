#!/bin/bash
# Issue #37's AMX prefill (branch amx37), one device call on the H200 machine's 16-core Xeon (KVM, amx_* listed).
# $K holds hark-base.xz (main b7807e0) and hark-new.xz (amx37), both bench/cpu/20261130-cpu16/build.sh builds,
# llama-bench.xz (CPU, static, the fourteenth session's), cpu.test.xz and llm.test.xz (`go test -c -trimpath
# -ldflags='-s -w'` of ./engine/cpu and ./engine/llm) and data.tar.xz (llm-kit/tokenizers/smollm2,
# llm-kit/golden, models/stories260K.gguf). Run from the lead's checkout root: K=.gpu/amx37 bash .gpu/amx37/call.sh
#  1. engine/cpu's AMX and quantized-GEMM tests with HARK_AMX_REQUIRE=1 (AMX must work: no skip passes), the GEMM
#     tests once more with HARK_AMX=0 (the VNNI path), the package's other product tests (Mul, Pack, Prefill) with
#     AMX on, engine/llm's golden stories on the CPU;
#  2. BenchmarkQGemmAB (SmolLM2-135M's prefill shapes, 512 rows: sgemm "old", VNNI, AMX kernels) at 16 workers;
#  3. pp512 + tg128 of the SmolLM2-135M-shaped q8_0 file: base, new, llama-bench alternating, 16 then 2 threads
#     (pinned to CPUs 0-1), two rounds of -r 3;
#  4. CPU profiles (HARK_CPUPROFILE) of pp512 alone: base and new at 16 threads, new at 2.
set -u
K=${K:-.gpu/amx37}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/wa
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared && cd $W
for b in hark-base hark-new llama-bench cpu.test llm.test; do xz -T4 -dc $K/$b.xz > $b && chmod +x $b; done
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared
{ echo "== machine"; date -u; nproc; lscpu | grep -E 'Model name|Hypervisor|Flags' | sed 's/Flags:.*\(amx[a-z_0-9 ]*\).*/amx flags: \1/'
  grep -o 'amx[a-z_0-9]*' /proc/cpuinfo | sort | uniq -c; uname -r; cat /proc/loadavg; sha256sum hark-base hark-new llama-bench
  echo "== tests at $(el) s"
  HARK_AMX_REQUIRE=1 ./cpu.test -test.count=1 -test.v -test.run 'AMX|QGemm' 2>&1 | grep -E '^(--- |ok|FAIL|PASS)|probe:|AMX' | grep -v '^--- PASS: TestQGemmKernels/'
  echo "-- HARK_AMX=0"; HARK_AMX=0 ./cpu.test -test.count=1 -test.run 'AMX|QGemm' 2>&1 | tail -3
  echo "-- engine/cpu's other product tests, AMX on"; HARK_AMX_REQUIRE=1 timeout 40 ./cpu.test -test.count=1 -test.run 'Mul|Pack|Prefill' 2>&1 | tail -3
  echo "-- engine/llm"; ./llm.test -test.count=1 -test.run 'Golden|Stories' 2>&1 | tail -3
  echo "== bench at $(el) s"
  ./cpu.test -test.run '^$' -test.bench 'QGemmAB/q8_0' -test.benchtime 40x 2>&1 | grep -E 'Benchmark|ok'
  ./hark-new bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $W/shared/llm-kit/tokenizers/smollm2 --pp 8 --tg 0 -r 1 -t 4 > /dev/null 2>&1
  M8=$(ls $W/m/*q8_0*.gguf | head -1); echo "model $M8 $(stat -c %s $M8)"
  echo "== timed at $(el) s; $(cat /proc/loadavg)"
  for T in 16 2; do P=""; [ $T -lt 16 ] && P="taskset -c 0-$(( T - 1 ))"
    for r in 1 2; do
      for h in base new; do
        echo "T=$T round $r hark-$h: $($P ./hark-$h bench llm --backend cpu --model $M8 -t $T -r 3 --pp 512 --tg 128 2>&1 | grep -E '^samples' | tr '\n' '|')"
      done
      echo "T=$T round $r llama-bench: $($P ./llama-bench -m $M8 -t $T -r 3 -p 512 -n 128 -o json | python3 -c '
import json,sys
for r in json.load(sys.stdin): print("%s mean %.2f samples t/s: %s"%("pp512" if r["n_prompt"] else "tg128",r["avg_ts"]," ".join("%.2f"%x for x in r["samples_ts"])),end="|")')"
    done
  done
  echo "== profiles at $(el) s (pp512 only, -r 3)"
  for h in base new; do HARK_CPUPROFILE=$OUT/$h-16.pprof ./hark-$h bench llm --backend cpu --model $M8 -t 16 -r 3 --pp 512 --tg 0 2>&1 | grep -E '^samples'; done
  HARK_CPUPROFILE=$OUT/new-2.pprof taskset -c 0-1 ./hark-new bench llm --backend cpu --model $M8 -t 2 -r 3 --pp 512 --tg 0 2>&1 | grep -E '^samples'
  echo "== done at $(el) s; $(cat /proc/loadavg)"; } > $OUT/amx37.log 2>&1
cat $OUT/amx37.log
