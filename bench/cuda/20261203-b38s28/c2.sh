#!/bin/bash
# b38s28 call 2 (prepared; its first try was refused at the machine's start): the native multi-row q8_0 mat-vec
# (cuda/native/mat_vec_rows.cu, sm_80 module: Tuning.MatVecRowsNative 16, 4 rows a block; HARK_CUDA_TUNE=
# MatVecRowsNative=1 is main's mat_vec_impl, MatVecRowsNativeBatch=8 its 8-row blocks) in the 16-row batch step. Branch b38s28; its base
# and sm90a PTX are main's (their cubins load), its sm80 module is JIT-compiled. Tests (3 modes), the step
# alternated, a profile, then served once each.
set -u
K=${K:-.gpu/b38s28/c2}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD; W=/w/b38s28c2
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v $W/models && cd $W
tar -xJf $K/bins.tar.xz && chmod +x hark cuda.test
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
ln -sf $F models/smollm2-shape-q8_0.gguf
MAIN="HARK_CUDA_TUNE=MatVecRowsNative=1"
{ echo "model written at $(el) s"
  for mode in normal permute poison; do
    case $mode in normal) E="X=1";; permute) E="HARK_CUDA_PERMUTE=20261203";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== cuda.test $mode ($E) at $(el) s"
    env $E timeout 100 ./cuda.test -test.run '^(TestGPUMatVecRows|TestGPUBatchEqualsSequential)$' -test.v -test.count=1 > $W/v/cuda-$mode.v.log 2>&1; echo "exit $?"
    grep -E "^(--- |ok|FAIL|PASS)|kernels from|k=576 m=16|k=1536 m=9 file=true" $W/v/cuda-$mode.v.log | head -8
  done; echo "== tests done at $(el) s"; } > $OUT/c2-tests.log 2>&1
bs() { echo "== $1 ($E) at $(el) s"
  env $E HARK_BENCH_MODEL=$F HARK_BENCH_MATMUL_ROWS=17 timeout 40 ./cuda.test -test.run '^$' -test.bench "$2" -test.benchtime $3 2>&1 | grep -E 'ms/step|FAIL|panic|launches|us/launch|kernels a step'; }
{ E="$MAIN" bs "main r1" GPUBatchStep 256x
  E="X=1" bs "branch r1" GPUBatchStep 256x
  E="$MAIN" bs "main r2" 'GPUBatchStep/rows=(4|16)' 256x
  E="X=1" bs "branch r2" 'GPUBatchStep/rows=(4|16)' 256x
  E="HARK_CUDA_TUNE=MatVecRowsNativeBatch=8" bs "branch, 8 rows a block" 'GPUBatchStep/rows=(4|16)' 256x
  E="HARK_CUDA_PROFILE=1" bs "branch profile" GPUBatchStep/rows=16 64x
  echo "== done at $(el) s"; } > $OUT/c2-bench.log 2>&1
serve() { echo "== $1 ($E) at $(el) s"
  env $E HARK_BATCH_TRACE=$W/v/trace-$1.log ./hark serve --models-dir $W/models --backend cuda --batch-gpu --ctx 8192 --stream-interval 0 --timeout 5m --addr 127.0.0.1:$2 > $W/v/serve-$1.log 2>&1 &
  local P=$!
  for i in $(seq 600); do (echo > /dev/tcp/127.0.0.1/$2) 2>/dev/null && break; sleep 0.2; done
  timeout 40 ./hark bench serve --url http://127.0.0.1:$2 --model smollm2-shape-q8_0 --concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 2>&1
  kill $P; wait $P; }
{ [ $(el) -lt 330 ] && { E="X=1" serve branch 18801; }
  [ $(el) -lt 420 ] && { E="$MAIN" serve main 18802; }
  echo "== done at $(el) s"; } > $OUT/c2-serve.log 2>&1
(cd $W/v && tar -cf - *.log | xz -6 > $OUT/c2-logs.tar.xz)
cat $OUT/c2-tests.log; grep -E "==|ms/step|us/launch|kernels a step" $OUT/c2-bench.log; grep -v "^$" $OUT/c2-serve.log | grep "==\||" | grep -v -- "---"
