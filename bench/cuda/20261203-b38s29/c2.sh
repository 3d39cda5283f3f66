#!/bin/bash
# b38s29 call 2: the tensor-core multi-row q8_0 mat-vec (cuda/native/mat_vec_rows.cu mat_vec_rows_mma_q8_0[_rp],
# sm_80 module; Tuning.MatVecRowsMMA 4 on the CUDA host; HARK_CUDA_TUNE=MatVecRowsMMA=1 is main's launch,
# mat_vec_rows4). One binary pair (branch b38s29, -tags hark_nocubin: the base and sm90a modules load the checkout's
# cubins, the changed sm80 module is JIT-compiled). Tests in three modes, the step alternated, one server each, then
# ncu's durations of the new products.
set -u
K=${K:-.gpu/b38s29/c2}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD; W=/w/b38s29c2
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v $W/models && cd $W
tar -xJf $K/bins.tar.xz && chmod +x hark cuda.test
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
( ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /dev/null 2>&1; ln -sf $F models/smollm2-shape-q8_0.gguf ) &
MW=$!
OFF="HARK_CUDA_TUNE=MatVecRowsMMA=1"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for mode in normal permute poison; do
    case $mode in normal) E="X=1";; permute) E="HARK_CUDA_PERMUTE=20261203";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== cuda.test $mode ($E) at $(el) s"
    env $E timeout 90 ./cuda.test -test.run '^(TestGPUMatVecRows|TestGPUBatchEqualsSequential)$' -test.v -test.count=1 > $W/v/cuda-$mode.v.log 2>&1; echo "exit $?"
    grep -E "^(--- |ok|FAIL|PASS)|    --- |kernels from|k=576 m=16 file=false|k=1536 m=9 file=true|Error" $W/v/cuda-$mode.v.log | head -20
  done; echo "== tests done at $(el) s"; } > $OUT/c2-tests.log 2>&1
wait $MW
bs() { echo "== $1 ($E) at $(el) s"
  env $E HARK_BENCH_MODEL=$F HARK_BENCH_MATMUL_ROWS=17 timeout 40 ./cuda.test -test.run '^$' -test.bench "$2" -test.benchtime $3 2>&1 | grep -E 'ms/step|FAIL|panic|launches|us/launch|kernels a step'; }
{ echo "model at $(el) s"
  E="$OFF" bs "main's launch r1" GPUBatchStep 256x
  E="X=1" bs "branch r1" GPUBatchStep 256x
  E="$OFF" bs "main's launch r2" 'GPUBatchStep/rows=(4|16)' 256x
  E="X=1" bs "branch r2" 'GPUBatchStep/rows=(4|16)' 256x
  E="HARK_CUDA_TUNE=MatVecRowsMMA=2" bs "branch, tensor cores from 2 rows" 'GPUBatchStep/rows=4' 256x
  echo "== done at $(el) s"; } > $OUT/c2-bench.log 2>&1
serve() { echo "== $1 ($E) at $(el) s"
  env $E HARK_BATCH_TRACE=$W/v/trace-$1.log ./hark serve --models-dir $W/models --backend cuda --batch-gpu --ctx 8192 --stream-interval 0 --timeout 5m --addr 127.0.0.1:$2 > $W/v/serve-$1.log 2>&1 &
  local P=$!
  for i in $(seq 600); do (echo > /dev/tcp/127.0.0.1/$2) 2>/dev/null && break; sleep 0.2; done
  timeout 40 ./hark bench serve --url http://127.0.0.1:$2 --model smollm2-shape-q8_0 --concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 2>&1
  kill $P; wait $P; }
{ [ $(el) -lt 150 ] && { E="X=1" serve branch 18811; }
  [ $(el) -lt 170 ] && { E="$OFF" serve main 18812; }
  echo "== done at $(el) s"; } > $OUT/c2-serve.log 2>&1
{ NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  echo "== ncu: the products of rows=16 (graphs off) at $(el) s"
  [ $(el) -lt 185 ] && env HARK_BENCH_MODEL=$F HARK_BENCH_MATMUL_ROWS=17 HARK_CUDA_GRAPHS=0 timeout 60 $NCU --clock-control none --cache-control none \
    -k "regex:mat_vec_rows|embed" --metrics gpu__time_duration.sum --csv --page raw ./cuda.test -test.run '^$' -test.bench 'GPUBatchStep/rows=16$' -test.benchtime 1x > $W/v/ncu.csv 2>$W/v/ncu.err
  echo "exit $? at $(el) s"; python3 $K/ncusum.py $W/v/ncu.csv rows=16 2>&1 | grep -v "^kernel" | cut -c1-60; } > $OUT/c2-ncu.log 2>&1
(cd $W/v && xz -6 ncu.csv 2>/dev/null; tar -cf - *.log ncu* | xz -6 > $OUT/c2-logs.tar.xz)
cat $OUT/c2-tests.log; grep -E "==|ms/step" $OUT/c2-bench.log; grep -v "^$" $OUT/c2-serve.log | grep "==\||" | grep -v -- "---"; cat $OUT/c2-ncu.log
