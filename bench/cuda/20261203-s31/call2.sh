#!/bin/bash
# Session 31's second lead call (issue #38): the first level's p95 against the prompt rows' step-cost bound
# (HARK_BATCH_BESIDE_COST: the most a step carrying decode rows may cost, as a multiple of the decode rows' own
# step; b38s31's default 1.8), servers alternated 1.8 / 1.5 / 1.3, twice, then the 4,000-token prompt at 1.5.
# Binaries: b38s31's kit (K=.gpu/b38s31: hark.xz and cuda.test.xz of the branch, -tags hark_nocubin; cubin/ its sm80
# cubins, the ones merged), from the checkout's root: K=.gpu/b38s31 bash bench/cuda/20261203-s31/call2.sh
set -u
K=${K:-.gpu/b38s31}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/lead31c2
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/shared $W/cubin $W/m $W/models $W/v
xz -T4 -dc $K/hark.xz > $W/hark && chmod +x $W/hark
tar -C $W/shared -xJf $K/data.tar.xz
cp cuda/cubin/*.xz $W/cubin/ && cp $K/cubin/*.xz $W/cubin/ && cp $K/cubin/SOURCE $W/cubin/SOURCE
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$W/cubin
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
cd $W && ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /dev/null 2>&1; ln -sf $F $W/models/smollm2-shape-q8_0.gguf
serve() { # $1 name, $2 port; env in $E; bench flags in $BF
  echo "== $1 ($E): bench serve $BF at $(el) s"
  env $E HARK_BATCH_TRACE=$W/v/trace-$1.log ./hark serve --models-dir $W/models --backend cuda --batch-gpu --ctx 8192 --stream-interval 0 --timeout 5m --addr 127.0.0.1:$2 > $W/v/serve-$1.log 2>&1 &
  local P=$!
  for i in $(seq 600); do (echo > /dev/tcp/127.0.0.1/$2) 2>/dev/null && break; sleep 0.2; done
  timeout 60 ./hark bench serve --url http://127.0.0.1:$2 --model smollm2-shape-q8_0 $BF 2>&1
  kill $P; wait $P; }
C16="--concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7"
LP="--per-token --concurrency 4,4 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 --long-prompt 4000 --long-after 16"
{ p=18900; for r in a b; do for c in 1.8 1.5 1.3; do p=$((p + 1)); E="HARK_BATCH_BESIDE_COST=$c" BF="$C16" serve r$r-$c $p; done; done
  [ $(el) -lt 150 ] && { E="HARK_BATCH_BESIDE_COST=1.5" BF="$LP" serve long-1.5 18920; }
  echo "== done at $(el) s"; } > $OUT/serve2.log 2>&1
(cd $W/v && tar -cf - *.log | xz -6 > $OUT/logs2.tar.xz)
grep -v "^$" $OUT/serve2.log | grep "==\||\|sent at\|longest" | grep -v -- "---"; echo "end at $(el) s"
