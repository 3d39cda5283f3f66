#!/bin/bash
# Issue #37 round 2 (branch pp37): one device call on the H200 machine's 16-core Xeon, from the lead's checkout root
# with the folder carried: K=.gpu/pp37 bash .gpu/pp37/call1.sh. $K holds hark-base.xz (main 78e82cd) and hark-new.xz
# (pp37), both bench/cpu/build-hark.sh builds, cpu.test.xz (`CGO_ENABLED=0 go test -c -trimpath -ldflags='-s -w'
# ./engine/cpu` at pp37) and data.tar.xz (`cd ../shared && tar -cJf X llm-kit/tokenizers/smollm2`).
#  1. engine/cpu's tests of the changed paths (blocked attention, panels from the pack, packed products);
#  2. pp512 of the SmolLM2-135M-shaped q8_0 file (`hark bench llm --dir` writes it), base and new alternating, three
#     rounds of -r 3 at 16 threads, then new with HARK_AMX=1 (AMX lifted past 2 workers) against new, two rounds;
#     then two rounds at 2 threads pinned to CPUs 0-1;
#  3. a CPU profile (HARK_CPUPROFILE) of new's pp512 at 16 threads.
set -u
K=${K:-.gpu/pp37}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/wp
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared && cd $W
for b in hark-base hark-new cpu.test; do xz -T4 -dc $K/$b.xz > $b && chmod +x $b; done
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared
pp() { # LABEL PREFIX... : one pp512 -r 3 run
  local l=$1; shift
  echo "$l: $("$@" bench llm --backend cpu --model $M8 -r 3 --pp 512 --tg 0 2>&1 | grep -E '^samples' | tr '\n' '|')"
}
{ echo "== machine"; date -u; nproc; lscpu | grep -E 'Model name|Hypervisor|Thread|Core|Socket|L2|L3'
  grep -o 'amx[a-z_0-9]*' /proc/cpuinfo | sort | uniq -c; uname -r; cat /proc/loadavg; sha256sum hark-base hark-new cpu.test
  ldconfig -p | grep -i openblas | head -2 || echo "no libopenblas"
  echo "== tests at $(el) s"
  timeout 25 ./cpu.test -test.count=1 -test.run 'TestAttention$|TestDecodeMatchesPrefill|TestPackPanelFromPack|TestPackReplacesOriginal|TestQGemmKernels' 2>&1 | tail -3
  ./hark-new bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $W/shared/llm-kit/tokenizers/smollm2 --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
  M8=$(ls $W/m/*q8_0*.gguf | head -1); echo "model $M8 $(stat -c %s $M8)"
  echo "== timed at $(el) s; $(cat /proc/loadavg)"
  for r in 1 2 3; do pp "T=16 round $r base" ./hark-base -t 16; pp "T=16 round $r new" ./hark-new -t 16; done
  for r in 1 2; do pp "T=16 round $r new HARK_AMX=1" env HARK_AMX=1 ./hark-new -t 16; pp "T=16 round $r new" ./hark-new -t 16; done
  for r in 1 2; do pp "T=2 round $r base" taskset -c 0-1 ./hark-base -t 2; pp "T=2 round $r new" taskset -c 0-1 ./hark-new -t 2; done
  echo "== profile at $(el) s"
  HARK_CPUPROFILE=$OUT/new-16.pprof ./hark-new bench llm --backend cpu --model $M8 -t 16 -r 3 --pp 512 --tg 0 2>&1 | grep -E '^samples'
  echo "== done at $(el) s; $(cat /proc/loadavg)"; } > $OUT/call1.log 2>&1
cat $OUT/call1.log
