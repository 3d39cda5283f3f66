#!/bin/bash
# Issue 33's serve-speed comparison on CUDA, sixth session (branch sample3): the Sample pass as four launches, its
# passes over the vocabulary (temperature; each token's fixed-point mass, bin and the mass histogram) over one
# threadgroup per 2,048 tokens instead of one threadgroup for the whole vocabulary (s5: 168.9 µs a launch).
# First the Sample kernel tests on the GPU against the CPU (msltest, HARK_MSLTEST_DEVICE=cuda) and the stories260K
# end-to-end tests (golden greedy tokens, the seeded draw), the cuda package's GPU tests; then hark bench llm's
# tg128 chained, greedy and at temperature 0.7 (as a chat request, at hark serve's context 4096, and at the chat
# prompt's depth), the kernel profile at temperature 0.7, then streamed chat through hark serve (Go client
# bench/serve/streamspeed, temperature 0.7, 128 tokens, first to last streamed token), as 20261129-s5-cuda did.
# Builds nothing: it takes hark.xz, streamspeed.xz, msltest.test.xz, cuda.test.xz and data.tar.xz from $K (default:
# .gpu/sample3 of the repository this script is in), prepared on the dev machine from the branch:
#   G=.gpu/sample3; mkdir -p $G
#   CGO_ENABLED=0 go build -ldflags='-s -w' -o $G/hark .
#   CGO_ENABLED=0 go build -ldflags='-s -w' -o $G/streamspeed ./bench/serve/streamspeed
#   CGO_ENABLED=0 go test -c -ldflags='-s -w' -o $G/msltest.test ./shaders/msltest
#   CGO_ENABLED=0 go test -c -ldflags='-s -w' -o $G/cuda.test ./cuda
#   xz -f $G/hark $G/streamspeed $G/msltest.test $G/cuda.test
#   tar -C ../shared -cJf $G/data.tar.xz llm-kit/tokenizers/smollm2 llm-kit/golden/stories260K.golden.json models/stories260K.gguf
# Usage (GPU machine, repository root): OUT=$OUT bash bench/serve/20261129-s6-cuda/call.sh
set -u
K=${K:-$(cd "$(dirname "$0")/../../.." && pwd)/.gpu/sample3}; OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/models && cd /w
for b in hark streamspeed msltest.test cuda.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared
F=/w/m/smollm2-135m-shape-v1-L30-q8_0.gguf
B="./hark bench llm --backend cuda --dir /w/m --type q8_0 --tokenizer /w/shared/llm-kit/tokenizers/smollm2 --pp 0 --tg 128 --chain"
{ nvidia-smi --query-gpu=name,driver_version --format=csv; ./hark --version
  echo "== msltest Sample and E2EStories on CUDA at $(el) s"
  HARK_MSLTEST_DEVICE=cuda timeout 100 ./msltest.test -test.run '^Test(SampleKernel|SampleDegenerate|SamplePlateauCut|SampleNoTopKRefine|SampleFixedPointCut|E2EStories)$' -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|draws|worst|sampled'
  echo "exit ${PIPESTATUS[0]}"
  echo "== cuda package GPU tests at $(el) s"
  timeout 60 ./cuda.test -test.run '^TestGPU(StoriesReplay|CopyBandwidth|Errors)$' -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual'
  echo "exit ${PIPESTATUS[0]}"
  echo "== A: $B -r 5 --ctx 4096 (greedy) at $(el) s"
  $B -r 5 --ctx 4096 2>&1 | grep -vE '^  '
  echo "== C: $B -r 5 --temp 0.7 --ctx 4096 (hark serve's context) at $(el) s"
  $B -r 5 --temp 0.7 --ctx 4096 2>&1 | grep -vE '^  |tg128 \|'
  echo "== E: $B -r 5 --temp 0.7 --ctx 4096 --depth 35 (the chat prompt's depth) at $(el) s"
  $B -r 5 --temp 0.7 --ctx 4096 --depth 35 2>&1 | grep -vE '^  |tg128 \|'
  echo "== profile (HARK_CUDA_PROFILE=1: graphs off, kernels timed): --temp 0.7 --ctx 4096 at $(el) s"
  HARK_CUDA_PROFILE=1 $B -r 2 --temp 0.7 --ctx 4096 2>&1 | grep -A22 'chained temp 0.7 profile'
  ln -sf $F /w/models/smollm2-shape-q8_0.gguf
  echo "== hark serve --backend cuda, streamed chat through bench/serve/streamspeed at $(el) s"
  ./hark serve --models-dir /w/models --backend cuda --addr 127.0.0.1:18089 > $OUT/serve.log 2>&1 &
  P=$!
  for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/18089) 2>/dev/null && break; sleep 0.2; done
  ./streamspeed -url http://127.0.0.1:18089 -model smollm2-shape-q8_0 -reps 6 -n 128
  kill $P; wait $P
  echo "== done at $(el) s"
} > $OUT/serve-cuda.log 2>&1
cat $OUT/serve-cuda.log
