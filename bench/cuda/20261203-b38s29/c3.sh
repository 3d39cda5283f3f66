#!/bin/bash
# b38s29 call 3 (staged, not run in session 29): issue #38's first-level p95. In the 16-stream level's first
# half the 16 prompts (128 tokens) are admitted one a step beside the running streams (128 rows, 5.0-8.7 ms a
# step on the H200 against 2.1-2.2 for 16 decode rows): that is the level's token p95 (5.6 ms). Here the existing
# knobs bound every prompt's chunk beside streams (HARK_BATCH_LONG_PROMPT=0 HARK_BATCH_PROMPT_BESIDE=N) at
# N = 16 / 32 / 64 against the whole budget (the default for prompts of at most 128 tokens), each server once;
# then BenchmarkGPUPromptBeside (4 streams + c rows of a 4,000-token prompt) and the long prompt beside 4 streams
# (--per-token) on the branch's tensor-core products. Binaries: c2's (branch b38s29 at its c2 commit).
set -u
K=${K:-.gpu/b38s29/c2}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD; W=/w/b38s29c3
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v $W/models && cd $W
tar -xJf $K/bins.tar.xz && chmod +x hark cuda.test
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /dev/null 2>&1
ln -sf $F models/smollm2-shape-q8_0.gguf
serve() { # $1: name, $2: port; env in $E; bench flags in $BF
  echo "== $1 ($E): bench serve $BF at $(el) s"
  env $E HARK_BATCH_TRACE=$W/v/trace-$1.log ./hark serve --models-dir $W/models --backend cuda --batch-gpu --ctx 8192 --stream-interval 0 --timeout 5m --addr 127.0.0.1:$2 > $W/v/serve-$1.log 2>&1 &
  local P=$!
  for i in $(seq 600); do (echo > /dev/tcp/127.0.0.1/$2) 2>/dev/null && break; sleep 0.2; done
  timeout 60 ./hark bench serve --url http://127.0.0.1:$2 --model smollm2-shape-q8_0 $BF 2>&1
  kill $P; wait $P; }
C16="--concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7"
LP="--per-token --concurrency 4,4 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 --long-prompt 4000 --long-after 16"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; echo "model at $(el) s"
  E="X=1" BF="$C16" serve whole 18821
  for N in 16 32 64; do E="HARK_BATCH_LONG_PROMPT=0 HARK_BATCH_PROMPT_BESIDE=$N" BF="$C16" serve beside$N 1882$((N / 16 + 1)); done
  E="X=1" BF="$C16" serve whole2 18829
  [ $(el) -lt 200 ] && { E="X=1" BF="$LP" serve long 18830; }
  echo "== done at $(el) s"; } > $OUT/c3-serve.log 2>&1
{ echo "== BenchmarkGPUPromptBeside at $(el) s"
  [ $(el) -lt 260 ] && env HARK_BENCH_MODEL=$F HARK_BENCH_MATMUL_ROWS=17 timeout 90 ./cuda.test -test.run '^$' -test.bench 'GPUPromptBeside' -test.benchtime 64x 2>&1 | grep -E 'ms/step|FAIL|panic'
  echo "== done at $(el) s"; } > $OUT/c3-bench.log 2>&1
(cd $W/v && tar -cf - *.log | xz -6 > $OUT/c3-logs.tar.xz)
grep -v "^$" $OUT/c3-serve.log | grep "==\||\|sent at\|longest" | grep -v -- "---"; grep -E "==|ms/step" $OUT/c3-bench.log
