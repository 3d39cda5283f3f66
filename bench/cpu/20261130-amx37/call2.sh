#!/bin/bash
# Second call (issue #37, branch amx37): is the AMX kernel's loss at 16 workers in call.sh's BenchmarkQGemmAB a
# matter of the thread count? The FFN shape (1536x576, 512 rows), VNNI against AMX kernels, at 2 workers (taskset
# 0-1) and at 16, twice each; then pp512 of the SmolLM2-135M-shaped q8_0 file at 16 threads with the same binary,
# AMX on and off (HARK_AMX=0), alternating, three rounds of -r 3. $K: hark-new.xz, cpu.test.xz, data.tar.xz as
# call.sh's. K=.gpu/amx37 bash .gpu/amx37/call2.sh
set -u
K=${K:-.gpu/amx37}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/wa
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared && cd $W
for b in hark-new cpu.test; do xz -T4 -dc $K/$b.xz > $b && chmod +x $b; done
tar -C $W/shared -xJf $K/data.tar.xz
{ date -u; cat /proc/loadavg
  ./hark-new bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $W/shared/llm-kit/tokenizers/smollm2 --pp 8 --tg 0 -r 1 -t 4 > /dev/null 2>&1
  for c in 1 2; do
    taskset -c 0-1 ./cpu.test -test.run '^$' -test.bench 'QGemmAB/q8_0/1536x576x512/(vnni|amx)' -test.benchtime 10x 2>&1 | grep Benchmark
    ./cpu.test -test.run '^$' -test.bench 'QGemmAB/q8_0/1536x576x512/(vnni|amx)' -test.benchtime 40x 2>&1 | grep Benchmark
  done
  M8=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
  echo "== pp512 at $(el) s"
  for r in 1 2 3; do for a in 1 0; do
    echo "T=16 round $r HARK_AMX=$a: $(HARK_AMX=$a ./hark-new bench llm --backend cpu --model $M8 -t 16 -r 3 --pp 512 --tg 0 2>&1 | grep -E '^samples')"
  done; done
  echo "== done at $(el) s"; } > $OUT/amx37-2.log 2>&1
cat $OUT/amx37-2.log
