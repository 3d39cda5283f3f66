#!/bin/bash
# b38s31's call (issue #38: prompts admitted beside running streams without stalling them). Branch b38s31 against
# main 1a5885c in one call on an H200: (1) the sm80 cubins for the branch's kernels_sm80.ptx.xz (mat_vec_rows_mma_q8_0
# past 16 rows: a column of 16 rows a block), copied over the tree's cuda/ first (MODULES=sm80; base and sm90a keep
# the tree's cubins); (2) on them cuda.test's TestCubinGuard, TestGPUMatVecRows (mma at 17/40/64 rows),
# TestGPUBatchEqualsSequential and TestGPUBatchStepCost in the normal, permuted and poisoned runs; (3)
# BenchmarkGPUStepRows (a step's cost against its rows: up to 12 decode rows and a shallow prompt chunk) with the
# mat-vec to 64 rows (HARK_BENCH_MATMUL_ROWS=65, the branch) and the GEMM from 17 (main's plan); the branch's table
# from it; (4) served, two servers each, alternated: main's behaviour (the branch's hark with main's plan and no
# cost bound: HARK_BATCH_MATMUL_ROWS=17 HARK_BATCH_BESIDE_COST=0 HARK_CUDA_TUNE=MatVecRowsMMAMax=16; main's own hark
# did not fit the call's 64 MiB), the branch (its built-in cost table), the branch on the table just measured; `hark bench serve --concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128
# --temperature 0.7`, then the 4,000-token prompt beside 4 streams (--per-token) on main and the branch.
# From the checkout's root: K=.gpu/b38s31 bash .gpu/b38s31/call.sh; $K: hark.xz, cuda.test.xz (branch, -tags
# hark_nocubin), ptxpdl.xz,
# kernels_sm80.ptx.xz (the branch's), data.tar.xz (stories260K and its golden files, the SmolLM2 tokenizer).
set -u
R=$(pwd); K=${K:-.gpu/b38s31}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/b38s31
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/shared $W/cubin $W/m $W/models $W/v $W/cub
for f in ptxpdl hark cuda.test; do xz -T4 -dc $K/$f.xz > $W/$f && chmod +x $W/$f; done
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
( cd $W && ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /dev/null 2>&1; ln -sf $F $W/models/smollm2-shape-q8_0.gguf ) &
MW=$!
echo "tree's sm80 ptx $(sha256sum cuda/kernels_sm80.ptx.xz | cut -c1-16), branch's $(sha256sum $K/kernels_sm80.ptx.xz | cut -c1-16); base $(sha256sum cuda/kernels.ptx.xz | cut -c1-16)" > $OUT/cubins.log
cp $K/kernels_sm80.ptx.xz cuda/kernels_sm80.ptx.xz
OUT=$W/cub MODULES=sm80 PTXPDL=$W/ptxpdl bash bench/cuda/cubins.sh >> $OUT/cubins.log 2>&1; echo "cubins: exit $? at $(el) s" >> $OUT/cubins.log
cp cuda/cubin/*.xz $W/cubin/ && cp $W/cub/cubin/*.xz $W/cubin/
{ grep -v '^sm80 ' cuda/cubin/SOURCE; cat $W/cub/cubin/SOURCE; } | sort > $W/cubin/SOURCE && cp $W/cubin/SOURCE $W/cub/cubin/SOURCE
(cd $W/cub && tar -cf $OUT/cubin.tar cubin)
cd $W
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for m in normal permuted poison; do
    case $m in normal) E="X=1";; permuted) E="HARK_CUDA_PERMUTE=20261203";; poison) E="HARK_CUDA_POISON=1";; esac
    env $E HARK_CUDA_CUBIN_DIR=$W/cubin timeout 100 ./cuda.test -test.run '^(TestCubinGuard|TestGPUMatVecRows|TestGPUBatchEqualsSequential|TestGPUBatchStepCost)$' -test.v -test.count=1 > v/cuda-$m.v.log 2>&1
    echo "-- cuda.test $m ($E): exit $? at $(el) s, passed $(grep -c -- '--- PASS' v/cuda-$m.v.log)"
    grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)|kernels from|m=(17|40|64) ' v/cuda-$m.v.log | sort | uniq -c | head -24
  done; } > $OUT/tests.log 2>&1
wait $MW
bs() { echo "== $1 ($E) at $(el) s"
  env $E HARK_CUDA_CUBIN_DIR=$W/cubin HARK_BENCH_MODEL=$F timeout 90 ./cuda.test -test.run '^$' -test.bench "$2" -test.benchtime $3 2>&1 | grep -E 'ms/step|FAIL|panic'; }
{ E="HARK_BENCH_MATMUL_ROWS=65" bs "step cost, the mat-vec to 64 rows (branch)" 'GPUStepRows$' 64x
  E="HARK_BENCH_MATMUL_ROWS=17" bs "step cost, the GEMM from 17 rows (main's plan)" 'GPUStepRows$' 64x
  E="HARK_BENCH_MATMUL_ROWS=17 HARK_CUDA_TUNE=MatVecRowsMMA=4" bs "decode steps, 16 rows on the mat-vec" 'GPUBatchStep$' 128x
  echo "== done at $(el) s"; } > $OUT/bench.log 2>&1
MEAS=$(awk '/step cost, the mat-vec/{on=1} /step cost, the GEMM/{on=0} on && /rows=/ {split($1,a,"rows="); split(a[2],b,"-"); for(i=1;i<=NF;i++) if($(i+1)=="ms/step") c=$i; printf "%s%s:%s", s, b[1], c; s=","}' $OUT/bench.log)
echo "measured step cost (branch): $MEAS" >> $OUT/bench.log
serve() { # $1 name, $2 port, $3 binary; env in $E; bench flags in $BF
  echo "== $1 ($3, $E): bench serve $BF at $(el) s"
  env $E HARK_CUDA_CUBIN_DIR=$W/cubin HARK_BATCH_TRACE=$W/v/trace-$1.log ./$3 serve --models-dir $W/models --backend cuda --batch-gpu --ctx 8192 --stream-interval 0 --timeout 5m --addr 127.0.0.1:$2 > $W/v/serve-$1.log 2>&1 &
  local P=$!
  for i in $(seq 600); do (echo > /dev/tcp/127.0.0.1/$2) 2>/dev/null && break; sleep 0.2; done
  timeout 60 ./hark bench serve --url http://127.0.0.1:$2 --model smollm2-shape-q8_0 $BF 2>&1
  kill $P; wait $P; }
C16="--concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7"
LP="--per-token --concurrency 4,4 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 --long-prompt 4000 --long-after 16"
MAIN="HARK_BATCH_MATMUL_ROWS=17 HARK_BATCH_BESIDE_COST=0 HARK_CUDA_TUNE=MatVecRowsMMAMax=16"
{ E="$MAIN" BF="$C16" serve main-a 18851 hark
  E="X=1" BF="$C16" serve branch-a 18852 hark
  E="HARK_BATCH_STEP_COST=$MEAS" BF="$C16" serve measured-a 18853 hark
  E="$MAIN" BF="$C16" serve main-b 18854 hark
  E="X=1" BF="$C16" serve branch-b 18855 hark
  E="HARK_BATCH_STEP_COST=$MEAS" BF="$C16" serve measured-b 18856 hark
  E="HARK_BATCH_BESIDE_COST=0" BF="$C16" serve nobound 18857 hark
  [ $(el) -lt 200 ] && { E="$MAIN" BF="$LP" serve main-long 18858 hark; E="X=1" BF="$LP" serve branch-long 18859 hark; }
  echo "== done at $(el) s"; } > $OUT/serve.log 2>&1
(cd $W/v && tar -cf - *.log | xz -6 > $OUT/logs.tar.xz)
cat $OUT/cubins.log $OUT/tests.log; grep -v "^kernel" $OUT/bench.log; grep -v "^$" $OUT/serve.log | grep "==\||\|sent at\|longest" | grep -v -- "---"; echo "end at $(el) s"
