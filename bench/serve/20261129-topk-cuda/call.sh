#!/bin/bash
# Issue 33's serve-speed comparison on CUDA after the no-top-k sampler change (branch topk): hark bench llm's tg128
# chained against streamed chat through hark serve (Go client bench/serve/streamspeed, temperature 0.7, 128 tokens,
# first to last streamed token), same SmolLM2-shaped q8_0 file; then hark generate at top-k 40 against top-k 0 (what
# an OpenAI request carries), wall seconds at two lengths. Builds nothing: it takes hark.xz, streamspeed.xz and
# data.tar.xz from $K (default: .gpu/serve of the repository this script is in), prepared on the dev machine:
#   mkdir -p .gpu/serve
#   CGO_ENABLED=0 go build -o .gpu/serve/hark . && xz -f .gpu/serve/hark
#   CGO_ENABLED=0 go build -o .gpu/serve/streamspeed ./bench/serve/streamspeed && xz -f .gpu/serve/streamspeed
#   tar -C ../shared -cJf .gpu/serve/data.tar.xz llm-kit/tokenizers/smollm2
# Usage (GPU machine, repository root): OUT=$OUT bash bench/serve/20261129-topk-cuda/call.sh
set -u
K=${K:-$(cd "$(dirname "$0")/../../.." && pwd)/.gpu/serve}; OUT=${OUT:-/tmp/out}
mkdir -p $OUT /w/shared /w/models && cd /w
for b in hark streamspeed; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared
F=/w/m/smollm2-135m-shape-v1-L30-q8_0.gguf
{ nvidia-smi --query-gpu=name,driver_version --format=csv; ./hark --version
  echo "== hark bench llm"
  ./hark bench llm --backend cuda --dir /w/m --type q8_0 --tokenizer /w/shared/llm-kit/tokenizers/smollm2 -r 5 --pp 0 --tg 128 --chain 2>&1 | grep -vE '^  '
  ln -sf $F /w/models/smollm2-shape-q8_0.gguf
  echo "== hark serve --backend cuda, streamed chat through bench/serve/streamspeed"
  ./hark serve --models-dir /w/models --backend cuda --addr 127.0.0.1:18089 > $OUT/serve.log 2>&1 &
  S=$!
  for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/18089) 2>/dev/null && break; sleep 0.2; done
  ./streamspeed -url http://127.0.0.1:18089 -model smollm2-shape-q8_0 -reps 5 -n 128
  kill $S; wait $S
  echo "== hark generate --backend cuda --seed 1 --temp 0.7 --top-p 0.95 --min-p 0 --ignore-eos: wall seconds"
  for k in 40 0; do
    for n in 1 257 1 257; do
      s=$(date +%s.%N)
      ./hark generate --backend cuda --model $F --seed 1 --temp 0.7 --top-k $k --top-p 0.95 --min-p 0 --ignore-eos -n $n "Once upon a time" > /dev/null 2>&1
      echo "top-k $k n $n: $(awk "BEGIN{print $(date +%s.%N) - $s}") s"
    done
  done
} > $OUT/serve-cuda.log 2>&1
cat $OUT/serve-cuda.log
