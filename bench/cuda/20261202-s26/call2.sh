#!/bin/bash
# Session 26's lead call 2: issue #38's long prompt beside 4 streams, the prompt rendered under the model's hold
# (hark-old: main 6e2aecf) against rendered after the hold is given back (hark-new: main 2d8a380), servers
# alternated, two runs each; then --concurrency 1,16 on hark-new. Both -tags hark_nocubin, reading the checkout's
# cubins (the same in both trees). $K holds hark-old.xz, hark-new.xz and data.tar.xz.
# From the lead's checkout root: K=.gpu/lead bash bench/cuda/20261202-s26/call2.sh
set -u
K=${K:-.gpu/lead}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD; W=/w/lead2
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v $W/models && cd $W
for b in hark-old hark-new; do xz -T4 -dc $K/$b.xz > $b && chmod +x $b; done
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
./hark-new bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
ln -sf $F models/smollm2-shape-q8_0.gguf
serve() { # $1: binary, $2: port; bench flags in $BF
  echo "== $1: hark serve --backend cuda --batch-gpu --ctx 8192 --stream-interval 0, bench serve $BF at $(el) s"
  ./$1 serve --models-dir $W/models --backend cuda --batch-gpu --ctx 8192 --stream-interval 0 --timeout 5m --addr 127.0.0.1:$2 > $W/v/serve-$1-$2.log 2>&1 &
  local P=$!
  for i in $(seq 600); do (echo > /dev/tcp/127.0.0.1/$2) 2>/dev/null && break; sleep 0.2; done
  timeout 100 ./hark-new bench serve --url http://127.0.0.1:$2 --model smollm2-shape-q8_0 $BF 2>&1
  kill $P; wait $P; }
{ BF="--concurrency 4,4 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 --long-prompt 4000 --long-after 16"
  serve hark-old 18301; serve hark-new 18302; serve hark-old 18303; serve hark-new 18304
  BF="--concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7" serve hark-new 18305
  echo "== done at $(el) s"; } > $OUT/call2-serve.log 2>&1
(cd $W/v && tar -czf $OUT/call2-logs.tgz *.log)
cat $OUT/call2-serve.log
