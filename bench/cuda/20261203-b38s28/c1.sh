#!/bin/bash
# b38s28 call 1: issue #38's 16-row step with its norms, gated activation and logits norm fused into its products
# (llm.BatchOptions.FuseRows, cuda's server: HARK_BATCH_FUSE) and cuda's 8-bit-activation mat-vecs over up to 16 rows
# (Tuning.MatVecQ8MaxM 16, MatVecQ8KMany 256, MatVecQ8GroupsMany 32; HARK_CUDA_TUNE=MatVecQ8MaxM=1 is main's launch).
# One binary each (branch b38s28 at 10c7152), main's cubins (no kernel changed). Tests (3 modes), step benchmarks
# alternated with profiles, then served (main's behaviour and the branch's alternated).
set -u
K=${K:-.gpu/b38s28/c1}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD; W=/w/b38s28
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v $W/models && cd $W
tar -xJf $K/bins.tar.xz && chmod +x hark cuda.test msltest.test
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
ln -sf $F models/smollm2-shape-q8_0.gguf
MAIN="HARK_BATCH_FUSE=0 HARK_CUDA_TUNE=MatVecQ8MaxM=1"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; echo "model written at $(el) s"
  for mode in normal permute poison; do
    case $mode in normal) E="X=1";; permute) E="HARK_CUDA_PERMUTE=20261203";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== cuda.test TestGPUBatch(EqualsSequential|DeepSplit) $mode ($E) at $(el) s"
    env $E timeout 100 ./cuda.test -test.run '^TestGPUBatch(EqualsSequential|DeepSplit)$' -test.v -test.count=1 > $W/v/cuda-$mode.v.log 2>&1; echo "exit $?"
    grep -E "^(--- |ok|FAIL|PASS)" $W/v/cuda-$mode.v.log
    echo "== msltest TestMatVecQ8Activations $mode at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 60 ./msltest.test -test.run '^TestMatVecQ8Activations$' -test.v -test.count=1 > $W/v/msl-$mode.v.log 2>&1; echo "exit $?"
    grep -E "^(--- |ok|FAIL|PASS)|m=(3|17) .*repack=true capped=false pre=false" $W/v/msl-$mode.v.log | grep -E "^(---|ok|FAIL|PASS)|rms_norm_mat_vec q8_0 k=2048"
  done; echo "== tests done at $(el) s"; } > $OUT/c1-tests.log 2>&1
bs() { # $1: label, env in $E, $2: bench regexp, $3: benchtime
  echo "== $1 ($E) at $(el) s"
  env $E HARK_BENCH_MODEL=$F HARK_BENCH_MATMUL_ROWS=17 timeout 60 ./cuda.test -test.run '^$' -test.bench "$2" -test.benchtime $3 2>&1 | grep -E 'ms/step|FAIL|panic|launches|us/launch|kernels a step'; }
{ for r in 1 2; do
    E="$MAIN" bs "main r$r" GPUBatchStep 256x
    E="X=1" bs "branch r$r" GPUBatchStep 256x
  done
  E="HARK_BATCH_FUSE=0" bs "q8x rows, unfused" GPUBatchStep/rows=16 256x
  E="HARK_CUDA_TUNE=MatVecQ8MaxM=1" bs "fused, float mat_vec" GPUBatchStep/rows=16 256x
  for g in 8 16 64 65536; do E="HARK_CUDA_TUNE=MatVecQ8GroupsMany=$g" bs "branch GroupsMany=$g" GPUBatchStep/rows=16 256x; done
  E="HARK_CUDA_TUNE=MatVecQ8Rows=4" bs "branch Q8Rows=4" GPUBatchStep/rows=16 256x
  E="HARK_CUDA_TUNE=MatVecQ8KQ8_0=256" bs "branch, one row on q8x too" GPUBatchStep/rows=1 256x
  E="X=1" bs "branch r3" GPUBatchStep/rows=16 256x
  E="$MAIN HARK_CUDA_PROFILE=1" bs "main profile" GPUBatchStep/rows=16 64x
  E="HARK_CUDA_PROFILE=1" bs "branch profile" GPUBatchStep/rows=16 64x
  echo "== done at $(el) s"; } > $OUT/c1-bench.log 2>&1
serve() { # $1: name, $2: port; env in $E; bench flags in $BF
  echo "== $1 ($E): bench serve $BF at $(el) s"
  env $E HARK_BATCH_TRACE=$W/v/trace-$1.log ./hark serve --models-dir $W/models --backend cuda --batch-gpu --ctx 8192 --stream-interval 0 --timeout 5m --addr 127.0.0.1:$2 > $W/v/serve-$1.log 2>&1 &
  local P=$!
  for i in $(seq 600); do (echo > /dev/tcp/127.0.0.1/$2) 2>/dev/null && break; sleep 0.2; done
  timeout 90 ./hark bench serve --url http://127.0.0.1:$2 --model smollm2-shape-q8_0 $BF 2>&1
  kill $P; wait $P; }
C16="--concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7"
LP="--per-token --concurrency 4,4 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 --long-prompt 4000 --long-after 16"
{ E="$MAIN" BF="$C16" serve main-c16a 18701
  E="X=1" BF="$C16" serve branch-c16a 18702
  E="$MAIN" BF="$C16" serve main-c16b 18703
  E="X=1" BF="$C16" serve branch-c16b 18704
  [ $(el) -lt 230 ] && { E="X=1" BF="$LP" serve branch-lp 18705; }
  echo "== done at $(el) s"; } > $OUT/c1-serve.log 2>&1
(cd $W/v && tar -cf - trace-*c16b.log serve-*.log | xz -6 > $OUT/c1-traces.tar.xz; tar -cf - *.v.log | xz -6 > $OUT/c1-testlogs.tar.xz)
cat $OUT/c1-tests.log; grep -E "==|ms/step" $OUT/c1-bench.log; grep -v "^$" $OUT/c1-serve.log | grep "==\||\|sent at" | grep -v -- "---"
