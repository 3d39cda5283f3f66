#!/bin/bash
# b38s27 call 1: place the long-prompt gap. The branch's hark (main 2fdb9c0 + the step trace's phases and
# counts, submit and yield lines; loadgen's longest-gap time) served with $HARK_BATCH_TRACE, several configs.
set -u
K=${K:-.gpu/b38s27/c1}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD; W=/w/b38s27
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v $W/models && cd $W
xz -T4 -dc $K/hark.xz > hark && chmod +x hark
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
ln -sf $F models/smollm2-shape-q8_0.gguf
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
serve() { # $1: name, $2: port; env in $E; bench flags in $BF
  echo "== $1 ($E): bench serve $BF at $(el) s"
  env $E HARK_BATCH_TRACE=$W/v/trace-$1.log ./hark serve --models-dir $W/models --backend cuda --batch-gpu --ctx 8192 --stream-interval 0 --timeout 5m --addr 127.0.0.1:$2 > $W/v/serve-$1.log 2>&1 &
  local P=$!
  for i in $(seq 600); do (echo > /dev/tcp/127.0.0.1/$2) 2>/dev/null && break; sleep 0.2; done
  timeout 120 ./hark bench serve --url http://127.0.0.1:$2 --model smollm2-shape-q8_0 $BF 2>&1
  kill $P; wait $P; }
LP="--concurrency 4,4 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 --long-prompt 4000 --long-after 16"
{ E="X=1" BF="$LP" serve default 18401
  E="HARK_BATCH_PROMPT_BESIDE=4 HARK_CUDA_TUNE=AttnPagedChunk=512" BF="$LP" serve pb4split 18402
  E="HARK_BATCH_PROMPT_BESIDE=12" BF="$LP" serve pb12 18403
  E="HARK_CUDA_GRAPHS=0" BF="$LP" serve nographs 18404
  E="HARK_BATCH_PROMPT_BESIDE=4 HARK_CUDA_GRAPHS=0 HARK_CUDA_TUNE=AttnPagedChunk=512" BF="$LP" serve pb4nographs 18405
  E="X=1" BF="--concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7" serve c16 18406
  echo "== done at $(el) s"; } > $OUT/c1-serve.log 2>&1
(cd $W/v && tar -czf $OUT/c1-traces.tgz *.log)
grep -v "^$" $OUT/c1-serve.log | grep "==\||\|sent at" | grep -v -- "---"
