#!/bin/bash
# Issue #38, session 26, helper b38, call 4, right after call 3 on its warm machine (its model file, the branch's hark
# in /w/b38 and its JIT cache): main 9b4fbd0's BenchmarkGPUPromptBeside / GPUBatchStep, then `hark serve --backend cuda
# --batch-gpu --ctx 8192 --stream-interval 0` against `hark bench serve` (the 4,000-token prompt beside 4 streams; 1
# and 16 streams), main's and the branch's servers alternated, PromptBeside through $HARK_BATCH_PROMPT_BESIDE. $K
# holds base-hark.xz, base-cuda.test.xz (main's). K=.gpu/b38/s bash .gpu/b38/s/call4.sh
set -u
K=${K:-.gpu/b38/s}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD; W=/w/b38
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/v && cd $W && [ -x hark ] || { echo "not call 3's machine"; exit 3; }
for b in base-hark base-cuda.test; do xz -T4 -dc $K/$b.xz > $b && chmod +x $b; done
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf; mkdir -p models && ln -sf $F models/smollm2-shape-q8_0.gguf
{ echo "== main BenchmarkGPUPromptBeside / GPUBatchStep at $(el) s"
  HARK_BENCH_MODEL=$F HARK_BENCH_MATMUL_ROWS=17 timeout 60 ./base-cuda.test -test.run '^$' -test.bench 'GPUPromptBeside' -test.benchtime 64x 2>&1 | grep -E 'ms/step|FAIL|panic'
  HARK_BENCH_MODEL=$F HARK_BENCH_MATMUL_ROWS=17 timeout 60 ./base-cuda.test -test.run '^$' -test.bench 'GPUBatchStep' -test.benchtime 256x 2>&1 | grep -E 'ms/step|FAIL|panic'
  echo "== done at $(el) s"; } > $OUT/call4-bench.log 2>&1
serve() { # $1: binary, $2: port, $3: PromptBeside (0: unset); bench flags in $BF
  echo "== $1 serve, HARK_BATCH_PROMPT_BESIDE=$3 (branch: HARK_CUDA_TUNE=$T), bench serve $BF at $(el) s"
  env $([ $3 != 0 ] && echo HARK_BATCH_PROMPT_BESIDE=$3) $([ $1 = hark ] && echo HARK_CUDA_TUNE=$T) ./$1 serve --models-dir $W/models --backend cuda --batch-gpu --ctx 8192 \
    --stream-interval 0 --timeout 5m --addr 127.0.0.1:$2 > $W/v/hserve-$1-$2.log 2>&1 &
  local P=$!
  for i in $(seq 300); do (echo > /dev/tcp/127.0.0.1/$2) 2>/dev/null && break; sleep 0.2; done
  timeout 60 ./$1 bench serve --url http://127.0.0.1:$2 --model smollm2-shape-q8_0 $BF 2>&1
  kill $P; wait $P; }
B=${BESIDE:-4 8 12}; T=${TUNE-AttnPagedChunk=512}
L="--concurrency 4,4 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 --long-prompt 4000 --long-after 16"
C="--concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7"
{ BF=$L serve base-hark 18101 0; BF=$L serve hark 18102 0
  for n in $B; do BF=$L serve hark $((18110+n)) $n; done
  BF=$L serve base-hark 18103 4
  BF=$C serve hark 18104 ${B%% *}; BF=$C serve base-hark 18105 0
  echo "== done at $(el) s"; } > $OUT/call4-serve.log 2>&1
(cd $W/v && tar -czf $OUT/call4-serve-logs.tgz hserve-*.log)
cat $OUT/call4-bench.log $OUT/call4-serve.log
