#!/bin/bash
# b38s29 call 3 (staged, not run in session 29): issue #38's first-level p95 and aggregate. In the 16-stream
# level's first half the 16 prompts (128 tokens) are admitted one a step beside the running streams (128 rows on
# the GEMM path, 5.0-8.7 ms a step on the H200, 5.3-5.8 of GPU run, against 2.1-2.2 for 16 decode rows): that is
# the level's token p95 (5.6 ms) and its wall time. Binaries from branch b38s29x (b38s29 + the tensor-core
# mat-vec past 16 rows, HARK_CUDA_TUNE=MatVecRowsMMAMax=N, 16 rows a block column; $HARK_BATCH_MATMUL_ROWS for
# the server). Asks: (1) what the 128-row step's 5.3 ms is (ncu, its first prefill steps, every kernel);
# (2) does a prompt chunk beside streams cost less on the mat-vec products (MatMulRows 129, MMA up to 128 rows)
# than on the GEMMs (BenchmarkGPUPromptBeside both ways); (3) served: the default, the chunk on the mat-vec
# products, and every prompt bounded beside streams (HARK_BATCH_LONG_PROMPT=0 HARK_BATCH_PROMPT_BESIDE=N).
set -u
K=${K:-.gpu/b38s29/c3}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD; W=/w/b38s29c3
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v $W/models && cd $W
tar -xJf $K/bins.tar.xz && chmod +x hark cuda.test
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
( ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /dev/null 2>&1; ln -sf $F models/smollm2-shape-q8_0.gguf ) &
MW=$!
MV="HARK_CUDA_TUNE=MatVecRowsMMAMax=128"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for mode in normal permute poison; do
    case $mode in normal) E="X=1";; permute) E="HARK_CUDA_PERMUTE=20261203";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== cuda.test $mode ($E) at $(el) s"
    env $E timeout 90 ./cuda.test -test.run '^(TestGPUMatVecRows|TestGPUBatchEqualsSequential)$' -test.v -test.count=1 > $W/v/cuda-$mode.v.log 2>&1; echo "exit $?"
    grep -E "^(--- |ok|FAIL|PASS)|    --- |m=40 file=true|Error" $W/v/cuda-$mode.v.log | head -20
  done; echo "== tests done at $(el) s"; } > $OUT/c3-tests.log 2>&1
wait $MW
bs() { echo "== $1 ($E) at $(el) s"
  env $E HARK_BENCH_MODEL=$F timeout 90 ./cuda.test -test.run '^$' -test.bench "$2" -test.benchtime $3 2>&1 | grep -E 'ms/step|FAIL|panic'; }
{ E="HARK_BENCH_MATMUL_ROWS=17" bs "decode steps" GPUBatchStep 256x
  E="HARK_BENCH_MATMUL_ROWS=17" bs "prompt beside 4 streams, GEMM from 17 rows" GPUPromptBeside 64x
  E="HARK_BENCH_MATMUL_ROWS=129 $MV" bs "prompt beside 4 streams, tensor-core mat-vecs to 128 rows" GPUPromptBeside 64x
  echo "== ncu: the first 700 launches (the first prefill steps, 128 rows, GEMM path) at $(el) s"
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  env HARK_BENCH_MODEL=$F HARK_BENCH_MATMUL_ROWS=17 HARK_CUDA_GRAPHS=0 timeout 90 $NCU --clock-control none --cache-control none \
    --launch-count 700 --metrics gpu__time_duration.sum --csv --page raw ./cuda.test -test.run '^$' -test.bench 'GPUBatchStep/rows=1$' -test.benchtime 1x > $W/v/ncu.csv 2>$W/v/ncu.err
  echo "exit $? at $(el) s"; python3 $K/ncusum.py $W/v/ncu.csv --step 1 "prefill step 2 (128 rows)" 2>&1 | head -40
  echo "== done at $(el) s"; } > $OUT/c3-bench.log 2>&1
serve() { # $1: name, $2: port; env in $E; bench flags in $BF
  echo "== $1 ($E): bench serve $BF at $(el) s"
  env $E HARK_BATCH_TRACE=$W/v/trace-$1.log ./hark serve --models-dir $W/models --backend cuda --batch-gpu --ctx 8192 --stream-interval 0 --timeout 5m --addr 127.0.0.1:$2 > $W/v/serve-$1.log 2>&1 &
  local P=$!
  for i in $(seq 600); do (echo > /dev/tcp/127.0.0.1/$2) 2>/dev/null && break; sleep 0.2; done
  timeout 60 ./hark bench serve --url http://127.0.0.1:$2 --model smollm2-shape-q8_0 $BF 2>&1
  kill $P; wait $P; }
C16="--concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7"
LP="--per-token --concurrency 4,4 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 --long-prompt 4000 --long-after 16"
{ E="X=1" BF="$C16" serve default 18821
  E="HARK_BATCH_MATMUL_ROWS=129 $MV" BF="$C16" serve mv128 18822
  for N in 16 32 64; do E="HARK_BATCH_LONG_PROMPT=0 HARK_BATCH_PROMPT_BESIDE=$N" BF="$C16" serve beside$N 1883$((N / 16)); done
  E="HARK_BATCH_MATMUL_ROWS=129 $MV HARK_BATCH_LONG_PROMPT=0 HARK_BATCH_PROMPT_BESIDE=32" BF="$C16" serve mv128-beside32 18840
  E="X=1" BF="$C16" serve default2 18841
  [ $(el) -lt 300 ] && { E="X=1" BF="$LP" serve long 18842; }
  echo "== done at $(el) s"; } > $OUT/c3-serve.log 2>&1
(cd $W/v && xz -6 ncu.csv; tar -cf - *.log ncu* | xz -6 > $OUT/c3-logs.tar.xz)
cat $OUT/c3-tests.log; grep -vE "^kernel" $OUT/c3-bench.log; grep -v "^$" $OUT/c3-serve.log | grep "==\||\|sent at\|longest" | grep -v -- "---"
