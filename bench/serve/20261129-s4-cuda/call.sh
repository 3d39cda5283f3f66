#!/bin/bash
# Issue 33's serve-speed comparison on CUDA after the sample branch (the Sample kernel's no-top-k path is the CPU's
# histogram algorithm; serve writes a stream's chunks off the decode chain): the Sample kernel tests on the GPU
# against the CPU (msltest, HARK_MSLTEST_DEVICE=cuda) and the stories260K end-to-end tests; hark bench llm's tg128
# chained against streamed chat through hark serve (Go client bench/serve/streamspeed, temperature 0.7, 128 tokens,
# first to last streamed token), same SmolLM2-shaped q8_0 file; hark generate at top-k 40 against top-k 0 (what an
# OpenAI request carries), wall seconds at two lengths; and greedy (argmax). Builds nothing: it
# takes hark.xz, streamspeed.xz, msltest.test.xz and data.tar.xz from $K (default: .gpu/sample of the repository
# this script is in), prepared on the dev machine from the branch:
#   G=.gpu/sample; mkdir -p $G
#   CGO_ENABLED=0 go build -ldflags='-s -w' -o $G/hark .
#   CGO_ENABLED=0 go build -ldflags='-s -w' -o $G/streamspeed ./bench/serve/streamspeed
#   CGO_ENABLED=0 go test -c -ldflags='-s -w' -o $G/msltest.test ./shaders/msltest
#   xz -f $G/hark $G/streamspeed $G/msltest.test
#   tar -C ../shared -cJf $G/data.tar.xz llm-kit/tokenizers/smollm2 llm-kit/golden/stories260K.golden.json models/stories260K.gguf
# Usage (GPU machine, repository root): OUT=$OUT bash bench/serve/20261129-s4-cuda/call.sh
set -u
K=${K:-$(cd "$(dirname "$0")/../../.." && pwd)/.gpu/sample}; OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/models && cd /w
for b in hark streamspeed msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared
F=/w/m/smollm2-135m-shape-v1-L30-q8_0.gguf
{ nvidia-smi --query-gpu=name,driver_version --format=csv; ./hark --version
  echo "== msltest Sample and E2EStories on CUDA at $(el) s"
  HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.run '^Test(SampleKernel|SampleDegenerate|SamplePlateauCut|SampleNoTopKRefine|E2EStories)$' -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|draws|missing|sampled'
  echo "exit ${PIPESTATUS[0]}"
  echo "== hark bench llm at $(el) s"
  ./hark bench llm --backend cuda --dir /w/m --type q8_0 --tokenizer /w/shared/llm-kit/tokenizers/smollm2 -r 5 --pp 0 --tg 128 --chain 2>&1 | grep -vE '^  '
  ln -sf $F /w/models/smollm2-shape-q8_0.gguf
  echo "== hark serve --backend cuda, streamed chat through bench/serve/streamspeed at $(el) s"
  ./hark serve --models-dir /w/models --backend cuda --addr 127.0.0.1:18089 > $OUT/serve.log 2>&1 &
  P=$!
  for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/18089) 2>/dev/null && break; sleep 0.2; done
  ./streamspeed -url http://127.0.0.1:18089 -model smollm2-shape-q8_0 -reps 5 -n 128
  kill $P; wait $P
  echo "== hark generate --backend cuda --seed 1 --temp 0.7 --top-p 0.95 --min-p 0 --ignore-eos: wall seconds at $(el) s"
  for k in 40 0; do
    for n in 1 257 1 257; do
      s=$(date +%s.%N)
      ./hark generate --backend cuda --model $F --seed 1 --temp 0.7 --top-k $k --top-p 0.95 --min-p 0 --ignore-eos -n $n "Once upon a time" > /dev/null 2>&1
      echo "top-k $k n $n: $(awk "BEGIN{print $(date +%s.%N) - $s}") s"
    done
  done
  echo "== the same, greedy (--temp 0: argmax, as bench's tg128), wall seconds at $(el) s"
  for n in 1 257 1 257; do
    s=$(date +%s.%N)
    ./hark generate --backend cuda --model $F --seed 1 --temp 0 --ignore-eos -n $n "Once upon a time" > /dev/null 2>&1
    echo "greedy n $n: $(awk "BEGIN{print $(date +%s.%N) - $s}") s"
  done
  echo "== done at $(el) s"
} > $OUT/serve-cuda.log 2>&1
cat $OUT/serve-cuda.log
