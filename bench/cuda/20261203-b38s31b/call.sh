#!/bin/bash
# b38s31b's device call (issue #38's first 16-stream level: the host work when a sequence joins). The branch pads a
# batch step's rows to 15 row buckets (2..128, the padding rows on a spare KV block) and records the graphs of every
# bucket's step and of 1..16 draws when the engine loads (llm.Batch.Warm), so the steps that admit prompts, and
# those of a level's last streams, replay graphs instead of launching ~275 kernels and recording one on the streams'
# path; a join's sampler counts no longer allocate, and cuda's staging no longer waits twice a join.
# 1. GPU tests, normal / permuted / poisoned: TestCubinGuard, TestGPUBatchEqualsSequential, TestGPUBatchStepCost,
#    TestGPUBatchDeepSplit, TestGPUBatchBuckets (padded rows change no real row; no graph recorded while requests run).
# 2. Servers alternated, twice: main (hark-main: the branch's base), the branch (defaults, bound 1.8), the branch at
#    HARK_BATCH_BESIDE_COST=1.7, 1.6 and 1.5 (README: the first level's p95 predicted 3.23 / 3.05 / 2.67 / 2.67 ms
#    at 1.8 / 1.7 / 1.6 / 1.5 from batchStepCost), the branch with HARK_BATCH_BUCKETS=0 (its host fixes only); `hark bench serve
#    --concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7` as bench/cuda/20261203-s31's
#    call1.sh; then the 4,000-token prompt beside 4 streams on main and the branch if time is left.
# Kit: bench/cuda/20261203-b38s31b/prep.sh builds it into .gpu/b38s31b/ (hark.xz, hark-main.xz, cuda.test.xz, all
# -tags hark_nocubin; data.tar.xz); the cubins are the checkout's cuda/cubin (no PTX change).
# From the checkout's root: K=.gpu/b38s31b bash .gpu/b38s31b/call.sh (carry [".gpu/b38s31b"]); <= ~150 s of script.
set -u
K=${K:-.gpu/b38s31b}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/b38s31b
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/shared $W/cubin $W/m $W/models $W/v
for f in hark hark-main cuda.test; do [ -f $K/$f.xz ] && xz -T4 -dc $K/$f.xz > $W/$f && chmod +x $W/$f; done
# without hark-main.xz (left out for the carry's size), "main" is the branch without buckets (its host fixes kept)
MB=hark-main; ME="X=1"; [ -x $W/hark-main ] || { MB=hark; ME="HARK_BATCH_BUCKETS=0"; echo "no hark-main: main = the branch, $ME"; }
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
( cd $W && ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /dev/null 2>&1; ln -sf $F $W/models/smollm2-shape-q8_0.gguf ) &
MW=$!
cp cuda/cubin/*.xz cuda/cubin/SOURCE $W/cubin/
export HARK_CUDA_CUBIN_DIR=$W/cubin
cat $K/SOURCE.txt 2>/dev/null; echo "cubins: the tree's"; cat $W/cubin/SOURCE
cd $W
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for m in normal permuted poison; do
    case $m in normal) E="X=1";; permuted) E="HARK_CUDA_PERMUTE=20261203";; poison) E="HARK_CUDA_POISON=1";; esac
    env $E timeout 100 ./cuda.test -test.run '^(TestCubinGuard|TestGPUBatchEqualsSequential|TestGPUBatchStepCost|TestGPUBatchDeepSplit|TestGPUBatchBuckets)$' -test.v -test.count=1 > v/cuda-$m.v.log 2>&1
    echo "-- cuda.test $m ($E): exit $? at $(el) s, passed $(grep -c -- '--- PASS' v/cuda-$m.v.log)"
    grep -E '^(\s*--- (FAIL|SKIP|PASS)|FAIL|panic)|graphs recorded' v/cuda-$m.v.log | head -16
  done; } > $OUT/tests.log 2>&1
wait $MW
serve() { # $1 name, $2 port, $3 binary; env in $E; bench flags in $BF
  echo "== $1 ($3, $E): bench serve $BF at $(el) s"
  env $E HARK_BATCH_TRACE=$W/v/trace-$1.log ./$3 serve --models-dir $W/models --backend cuda --batch-gpu --ctx 8192 --stream-interval 0 --timeout 5m --addr 127.0.0.1:$2 > $W/v/serve-$1.log 2>&1 &
  local P=$!
  for i in $(seq 600); do (echo > /dev/tcp/127.0.0.1/$2) 2>/dev/null && break; sleep 0.2; done
  timeout 60 ./$3 bench serve --url http://127.0.0.1:$2 --model smollm2-shape-q8_0 $BF 2>&1
  kill $P; wait $P; }
C16="--concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7"
LP="--per-token --concurrency 4,4 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 --long-prompt 4000 --long-after 16"
{ p=18920; for r in a b; do
    [ $(el) -lt 130 ] || { echo "== round $r skipped at $(el) s"; break; }
    p=$((p + 1)); E="$ME" BF="$C16" serve main-$r $p $MB
    p=$((p + 1)); E="X=1" BF="$C16" serve branch-$r $p hark
    p=$((p + 1)); E="HARK_BATCH_BESIDE_COST=1.7" BF="$C16" serve b17-$r $p hark
    p=$((p + 1)); E="HARK_BATCH_BESIDE_COST=1.6" BF="$C16" serve b16-$r $p hark
    p=$((p + 1)); E="HARK_BATCH_BESIDE_COST=1.5" BF="$C16" serve b15-$r $p hark
    p=$((p + 1)); E="HARK_BATCH_BUCKETS=0" BF="$C16" serve nobuckets-$r $p hark
  done
  [ $(el) -lt 150 ] && { E="$ME" BF="$LP" serve main-long 18947 $MB; E="X=1" BF="$LP" serve branch-long 18948 hark; }
  echo "== done at $(el) s"; } > $OUT/serve.log 2>&1
(cd $W/v && tar -cf - *.log | xz -6 > $OUT/logs.tar.xz)
cat $OUT/tests.log; grep -v "^$" $OUT/serve.log | grep "==\||\|sent at\|longest" | grep -v -- "---"; echo "end at $(el) s"
