#!/bin/bash
# b38s31's call 2 (issue #38: prompts admitted beside running streams). Call 1 (c1.sh) measured a step of up to 64
# rows on the tensor-core mat-vec at 2.62 ms against the GEMM's 4.8-5.0 from 17 rows, so the branch now keeps every
# batch step of the 128-row plan on the mat-vec (Tuning.MatVecRowsMMAMax 128, MatMulRows 129) with an estimated
# cost table past 64 rows. This call, one branch binary (the kernels unchanged since call 1, whose sm80 cubins are
# committed and carried): the GPU tests in three modes (TestGPUMatVecRows' mma to 128 rows); BenchmarkGPUStepRows
# on the 129-row plan (the measured table) and BenchmarkGPUPromptBeside (a 4,000-token prompt's chunk at ~3,970 keys
# beside 4 streams) on it and on main's plan; then servers alternated: main's behaviour (HARK_BATCH_MATMUL_ROWS=17
# HARK_BATCH_BESIDE_COST=0 HARK_CUDA_TUNE=MatVecRowsMMAMax=16), the branch's defaults, the branch on the table just
# measured, call 1's configuration (the mat-vec to 64 rows); the 4,000-token prompt beside 4 streams on main and the
# branch. From the checkout's root: K=.gpu/b38s31 bash .gpu/b38s31/call.sh; $K: hark.xz, cuda.test.xz (branch,
# -tags hark_nocubin), cubin/ (the branch's sm80 cubins and SOURCE), data.tar.xz.
set -u
R=$(pwd); K=${K:-.gpu/b38s31}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/b38s31c2
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/shared $W/cubin $W/m $W/models $W/v
for f in hark cuda.test; do xz -T4 -dc $K/$f.xz > $W/$f && chmod +x $W/$f; done
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
( cd $W && ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /dev/null 2>&1; ln -sf $F $W/models/smollm2-shape-q8_0.gguf ) &
MW=$!
cp cuda/cubin/*.xz $W/cubin/ && cp $K/cubin/*.xz $W/cubin/ && cp $K/cubin/SOURCE $W/cubin/SOURCE
echo "tree's SOURCE:"; cat cuda/cubin/SOURCE; echo "used:"; cat $W/cubin/SOURCE
cd $W
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for m in normal permuted poison; do
    case $m in normal) E="X=1";; permuted) E="HARK_CUDA_PERMUTE=20261203";; poison) E="HARK_CUDA_POISON=1";; esac
    env $E HARK_CUDA_CUBIN_DIR=$W/cubin timeout 100 ./cuda.test -test.run '^(TestCubinGuard|TestGPUMatVecRows|TestGPUBatchEqualsSequential|TestGPUBatchStepCost)$' -test.v -test.count=1 > v/cuda-$m.v.log 2>&1
    echo "-- cuda.test $m ($E): exit $? at $(el) s, passed $(grep -c -- '--- PASS' v/cuda-$m.v.log)"
    grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)|m=(100|128) ' v/cuda-$m.v.log | sort | uniq -c | head -16
  done; } > $OUT/tests.log 2>&1
wait $MW
bs() { echo "== $1 ($E) at $(el) s"
  env $E HARK_CUDA_CUBIN_DIR=$W/cubin HARK_BENCH_MODEL=$F timeout 90 ./cuda.test -test.run '^$' -test.bench "$2" -test.benchtime $3 2>&1 | grep -E 'ms/step|FAIL|panic'; }
MAIN="HARK_BATCH_MATMUL_ROWS=17 HARK_BATCH_BESIDE_COST=0 HARK_CUDA_TUNE=MatVecRowsMMAMax=16"
{ E="HARK_BENCH_MATMUL_ROWS=129" bs "step cost, every row count on the mat-vec (branch)" 'GPUStepRows$' 64x
  E="HARK_BENCH_MATMUL_ROWS=129" bs "a 4,000-token prompt's chunk beside 4 streams, the mat-vec (branch)" 'GPUPromptBeside$' 32x
  E="HARK_BENCH_MATMUL_ROWS=17 HARK_CUDA_TUNE=MatVecRowsMMAMax=16" bs "the same, main's plan (GEMM from 17)" 'GPUPromptBeside$' 32x
  echo "== done at $(el) s"; } > $OUT/bench.log 2>&1
MEAS=$(awk '/step cost, every row/{on=1} /4,000-token/{on=0} on && /rows=/ {split($1,a,"rows="); split(a[2],b,"-"); for(i=1;i<=NF;i++) if($(i+1)=="ms/step") c=$i; printf "%s%s:%s", s, b[1], c; s=","}' $OUT/bench.log)
echo "measured step cost (branch): $MEAS" >> $OUT/bench.log
C1COST="1:1.286,4:1.844,8:1.818,12:1.985,16:1.899,24:2.063,32:2.170,40:2.368,48:2.334,56:2.529,64:2.617,65:4.974,96:5.152,128:5.487"
serve() { # $1 name, $2 port; env in $E; bench flags in $BF
  echo "== $1 ($E): bench serve $BF at $(el) s"
  env $E HARK_CUDA_CUBIN_DIR=$W/cubin HARK_BATCH_TRACE=$W/v/trace-$1.log ./hark serve --models-dir $W/models --backend cuda --batch-gpu --ctx 8192 --stream-interval 0 --timeout 5m --addr 127.0.0.1:$2 > $W/v/serve-$1.log 2>&1 &
  local P=$!
  for i in $(seq 600); do (echo > /dev/tcp/127.0.0.1/$2) 2>/dev/null && break; sleep 0.2; done
  timeout 60 ./hark bench serve --url http://127.0.0.1:$2 --model smollm2-shape-q8_0 $BF 2>&1
  kill $P; wait $P; }
C16="--concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7"
LP="--per-token --concurrency 4,4 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 --long-prompt 4000 --long-after 16"
{ E="$MAIN" BF="$C16" serve main-a 18861
  E="X=1" BF="$C16" serve branch-a 18862
  E="HARK_BATCH_STEP_COST=$MEAS" BF="$C16" serve measured-a 18863
  E="HARK_BATCH_MATMUL_ROWS=65 HARK_CUDA_TUNE=MatVecRowsMMAMax=64 HARK_BATCH_STEP_COST=$C1COST" BF="$C16" serve c1cfg 18864
  E="$MAIN" BF="$C16" serve main-b 18865
  E="X=1" BF="$C16" serve branch-b 18866
  E="HARK_BATCH_STEP_COST=$MEAS" BF="$C16" serve measured-b 18867
  E="HARK_BATCH_STEP_COST=$MEAS HARK_BATCH_BESIDE_COST=2.2" BF="$C16" serve ratio22 18868
  [ $(el) -lt 200 ] && { E="$MAIN" BF="$LP" serve main-long 18869; E="HARK_BATCH_STEP_COST=$MEAS" BF="$LP" serve branch-long 18870; }
  echo "== done at $(el) s"; } > $OUT/serve.log 2>&1
(cd $W/v && tar -cf - *.log | xz -6 > $OUT/logs.tar.xz)
cat $OUT/tests.log; grep -v "^kernel" $OUT/bench.log; grep -v "^$" $OUT/serve.log | grep "==\||\|sent at\|longest" | grep -v -- "---"; echo "end at $(el) s"
