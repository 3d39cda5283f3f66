#!/bin/bash
# b38s27 call 3: the long prompt beside 4 streams measured a gap a token (bench serve --per-token: logprobs count
# each chunk's tokens), main's behaviour (HARK_BATCH_PROMPT_BESIDE=0 HARK_CUDA_PAGED_SPLIT=0) and the branch's
# (47c5096) alternated in one binary, then the branch once more.
set -u
K=${K:-.gpu/b38s27/c3}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD; W=/w/b38s27c3
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v $W/models && cd $W
xz -T4 -dc $K/hark.xz > hark && chmod +x hark
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
ln -sf $F models/smollm2-shape-q8_0.gguf
serve() { # $1: name, $2: port; env in $E
  echo "== $1 ($E) at $(el) s"
  env $E HARK_BATCH_TRACE=$W/v/trace-$1.log ./hark serve --models-dir $W/models --backend cuda --batch-gpu --ctx 8192 --stream-interval 0 --timeout 5m --addr 127.0.0.1:$2 > $W/v/serve-$1.log 2>&1 &
  local P=$!
  for i in $(seq 600); do (echo > /dev/tcp/127.0.0.1/$2) 2>/dev/null && break; sleep 0.2; done
  timeout 60 ./hark bench serve --url http://127.0.0.1:$2 --model smollm2-shape-q8_0 --per-token --token-trace $W/v/tokens-$1.log --concurrency 4,4 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 --long-prompt 4000 --long-after 16 2>&1
  kill $P; wait $P; }
{ E="HARK_BATCH_PROMPT_BESIDE=0 HARK_CUDA_PAGED_SPLIT=0" serve main 18601
  E="X=1" serve branch1 18602
  E="X=1" serve branch2 18603
  echo "== done at $(el) s"; } > $OUT/c3-serve.log 2>&1
(cd $W/v && tar -cf - trace-*.log tokens-*.log | xz -9 > $OUT/c3-traces.tar.xz)
grep -v "^$" $OUT/c3-serve.log | grep "==\||\|sent at" | grep -v -- "---"
