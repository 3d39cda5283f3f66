#!/bin/bash
# b38s27 call 2: the branch (long prompts 4 tokens a step beside streams; a step's paged attention split over
# its keys when its deepest row passes 512 keys) on the GPU: cuda tests in 3 modes, the step benchmarks with
# the deep split and without (HARK_CUDA_PAGED_SPLIT=0), then served: main's behaviour (same binary,
# HARK_BATCH_PROMPT_BESIDE=0 HARK_CUDA_PAGED_SPLIT=0) and the branch's alternated, two runs each, 16 streams.
set -u
K=${K:-.gpu/b38s27/c2}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD; W=/w/b38s27c2
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v $W/models && cd $W
for b in hark cuda.test; do xz -T4 -dc $K/$b.xz > $b && chmod +x $b; done
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
ln -sf $F models/smollm2-shape-q8_0.gguf
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for mode in normal permute poison; do
    case $mode in normal) E="X=1";; permute) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== cuda.test TestGPUBatch(EqualsSequential|DeepSplit) $mode ($E) at $(el) s"
    env $E timeout 150 ./cuda.test -test.run '^TestGPUBatch(EqualsSequential|DeepSplit)$' -test.v -test.count=1 > $W/v/cuda-$mode.v.log 2>&1; echo "exit $?"
    grep -E "^(--- |ok|FAIL|PASS)" $W/v/cuda-$mode.v.log
  done; echo "== tests done at $(el) s"; } > $OUT/c2-tests.log 2>&1
{ for E in "X=1" "HARK_CUDA_PAGED_SPLIT=0"; do
    echo "== BenchmarkGPUPromptBeside / GPUBatchStep ($E) at $(el) s"
    env $E HARK_BENCH_MODEL=$F HARK_BENCH_MATMUL_ROWS=17 timeout 60 ./cuda.test -test.run '^$' -test.bench 'GPUPromptBeside' -test.benchtime 64x 2>&1 | grep -E 'ms/step|FAIL|panic'
    env $E HARK_BENCH_MODEL=$F HARK_BENCH_MATMUL_ROWS=17 timeout 60 ./cuda.test -test.run '^$' -test.bench 'GPUBatchStep' -test.benchtime 256x 2>&1 | grep -E 'ms/step|FAIL|panic'
  done; echo "== done at $(el) s"; } > $OUT/c2-bench.log 2>&1
serve() { # $1: name, $2: port; env in $E; bench flags in $BF
  echo "== $1 ($E): bench serve $BF at $(el) s"
  env $E HARK_BATCH_TRACE=$W/v/trace-$1.log ./hark serve --models-dir $W/models --backend cuda --batch-gpu --ctx 8192 --stream-interval 0 --timeout 5m --addr 127.0.0.1:$2 > $W/v/serve-$1.log 2>&1 &
  local P=$!
  for i in $(seq 600); do (echo > /dev/tcp/127.0.0.1/$2) 2>/dev/null && break; sleep 0.2; done
  timeout 120 ./hark bench serve --url http://127.0.0.1:$2 --model smollm2-shape-q8_0 --token-trace $W/v/tokens-$1.log $BF 2>&1
  kill $P; wait $P; }
LP="--concurrency 4,4 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 --long-prompt 4000 --long-after 16"
MAIN="HARK_BATCH_PROMPT_BESIDE=0 HARK_CUDA_PAGED_SPLIT=0"
C16="--concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7"
{ E="$MAIN" BF="$LP" serve main1 18501
  E="X=1" BF="$LP" serve branch1 18502
  E="$MAIN" BF="$LP" serve main2 18503
  E="X=1" BF="$LP" serve branch2 18504
  E="HARK_BATCH_PROMPT_BESIDE=8" BF="$LP" serve branch-pb8 18505
  E="$MAIN" BF="$C16" serve main-c16 18506
  E="X=1" BF="$C16" serve branch-c16 18507
  echo "== done at $(el) s"; } > $OUT/c2-serve.log 2>&1
(cd $W/v && tar -czf $OUT/c2-logs.tgz *.log)
cat $OUT/c2-tests.log $OUT/c2-bench.log; grep -v "^$" $OUT/c2-serve.log | grep "==\||\|sent at" | grep -v -- "---"
