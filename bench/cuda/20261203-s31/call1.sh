#!/bin/bash
# Session 31's first lead call (issue #38 round 5 on main): the sm80 module's cubins for main's tensor-core multi-row
# q8_0 mat-vec (b38s29's 80ec5b4, applied from bench/cuda/20261203-b38s29/ as 64030f9; base and sm90a unchanged, so
# MODULES=sm80), then on them cuda.test's TestCubinGuard / TestGPUMatVecRows / TestGPUBatchEqualsSequential in the
# normal, permuted and poisoned runs, BenchmarkGPUBatchStep at 1/4/16 rows, and the served 16-stream level twice
# (hark serve --batch-gpu, temperature 0.7, 128+128) plus the 4,000-token prompt beside 4 streams.
# From the checkout's root: K=.gpu/lead31 bash bench/cuda/20261203-s31/call1.sh, $K holding ptxpdl.xz, hark.xz,
# cuda.test.xz (main, -tags hark_nocubin: cubins through HARK_CUDA_CUBIN_DIR) and data.tar.xz (stories260K and its
# golden files, the SmolLM2 tokenizer). Writes $OUT/cubin/ (copy over cuda/cubin/ and commit).
set -u
R=$(pwd); K=${K:-.gpu/lead31}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/lead31
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/shared $W/cubin $W/m $W/models $W/v
for f in ptxpdl hark cuda.test; do xz -T4 -dc $K/$f.xz > $W/$f && chmod +x $W/$f; done
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
( cd $W && ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /dev/null 2>&1; ln -sf $F $W/models/smollm2-shape-q8_0.gguf ) &
MW=$!
MODULES=sm80 PTXPDL=$W/ptxpdl bash bench/cuda/cubins.sh > /dev/null 2>&1; echo "cubins: exit $? at $(el) s"
cp cuda/cubin/*.xz $W/cubin/ && cp $OUT/cubin/*.xz $W/cubin/
{ grep -v '^sm80 ' cuda/cubin/SOURCE; cat $OUT/cubin/SOURCE; } | sort > $W/cubin/SOURCE && cp $W/cubin/SOURCE $OUT/cubin/SOURCE
export HARK_CUDA_CUBIN_DIR=$W/cubin
cd $W
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for m in normal permuted poison; do
    case $m in normal) E="X=1";; permuted) E="HARK_CUDA_PERMUTE=20261203";; poison) E="HARK_CUDA_POISON=1";; esac
    env $E timeout 90 ./cuda.test -test.run '^(TestCubinGuard|TestGPUMatVecRows|TestGPUBatchEqualsSequential)$' -test.v -test.count=1 > v/cuda-$m.v.log 2>&1
    echo "-- cuda.test $m ($E): exit $? at $(el) s, passed $(grep -c -- '--- PASS' v/cuda-$m.v.log)"
    grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)|kernels from' v/cuda-$m.v.log | sort | uniq -c | head -6
  done; } > $OUT/tests.log 2>&1
wait $MW
{ echo "== BenchmarkGPUBatchStep at $(el) s"
  HARK_BENCH_MODEL=$F timeout 60 ./cuda.test -test.run '^$' -test.bench GPUBatchStep -test.benchtime 256x 2>&1 | grep -E 'ms/step|FAIL|panic'; } > $OUT/bench.log 2>&1
serve() { # $1 name, $2 port; bench flags in $BF
  echo "== $1: bench serve $BF at $(el) s"
  HARK_BATCH_TRACE=$W/v/trace-$1.log ./hark serve --models-dir $W/models --backend cuda --batch-gpu --ctx 8192 --stream-interval 0 --timeout 5m --addr 127.0.0.1:$2 > $W/v/serve-$1.log 2>&1 &
  local P=$!
  for i in $(seq 600); do (echo > /dev/tcp/127.0.0.1/$2) 2>/dev/null && break; sleep 0.2; done
  timeout 90 ./hark bench serve --url http://127.0.0.1:$2 --model smollm2-shape-q8_0 $BF 2>&1
  kill $P; wait $P; }
C16="--concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7"
LP="--per-token --concurrency 4,4 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 --long-prompt 4000 --long-after 16"
{ BF="$C16" serve c16a 18811; BF="$C16" serve c16b 18812; [ $(el) -lt 200 ] && BF="$LP" serve long 18813; echo "== done at $(el) s"; } > $OUT/serve.log 2>&1
(cd $W/v && tar -cf - *.log | xz -6 > $OUT/logs.tar.xz)
cat $OUT/cubin/SOURCE $OUT/tests.log $OUT/bench.log; grep -v "^$" $OUT/serve.log | grep "==\||\|sent at\|longest" | grep -v -- "---"; echo "end at $(el) s"
