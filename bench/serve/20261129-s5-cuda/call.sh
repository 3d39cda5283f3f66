#!/bin/bash
# Issue 33's serve-speed comparison on CUDA, fifth session (branch sample2): where the last ~0.3 ms a token between
# streamed chat and hark bench llm's tg128 chained goes. hark bench llm now takes --temp (the chained tg sampled as an
# OpenAI chat request: temperature 0.7, no top-k or top-p) and --ctx (the context hark serve loads, 4096), so the
# chat's sampler and plan are timed in the bench itself, and with HARK_CUDA_PROFILE=1 (graphs off, every kernel
# timed) the Sample pass's kernel time is set against argmax's. Then streamed chat through hark serve (Go client
# bench/serve/streamspeed, temperature 0.7, 128 tokens, first to last streamed token), as 20261129-s4-cuda did.
# First the Sample kernel tests on the GPU against the CPU (msltest, HARK_MSLTEST_DEVICE=cuda), the CPU now drawing
# with the kernel's fixed-point masses (TestSampleFixedPointCut, TestSampleExpFixedPoint bit for bit).
# Builds nothing: it takes hark.xz, streamspeed.xz, msltest.test.xz and data.tar.xz from $K (default: .gpu/sample2 of
# the repository this script is in), prepared on the dev machine from the branch:
#   G=.gpu/sample2; mkdir -p $G
#   CGO_ENABLED=0 go build -ldflags='-s -w' -o $G/hark .
#   CGO_ENABLED=0 go build -ldflags='-s -w' -o $G/streamspeed ./bench/serve/streamspeed
#   CGO_ENABLED=0 go test -c -ldflags='-s -w' -o $G/msltest.test ./shaders/msltest
#   xz -f $G/hark $G/streamspeed $G/msltest.test
#   tar -C ../shared -cJf $G/data.tar.xz llm-kit/tokenizers/smollm2 models/stories260K.gguf
# Usage (GPU machine, repository root): OUT=$OUT bash bench/serve/20261129-s5-cuda/call.sh
set -u
K=${K:-$(cd "$(dirname "$0")/../../.." && pwd)/.gpu/sample2}; OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/models && cd /w
for b in hark streamspeed msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared
F=/w/m/smollm2-135m-shape-v1-L30-q8_0.gguf
B="./hark bench llm --backend cuda --dir /w/m --type q8_0 --tokenizer /w/shared/llm-kit/tokenizers/smollm2 --pp 0 --tg 128 --chain"
{ nvidia-smi --query-gpu=name,driver_version --format=csv; ./hark --version
  echo "== msltest Sample on CUDA at $(el) s"
  HARK_MSLTEST_DEVICE=cuda timeout 100 ./msltest.test -test.run '^Test(SampleKernel|SampleDegenerate|SamplePlateauCut|SampleNoTopKRefine|SampleFixedPointCut|SampleExpFixedPoint)$' -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|draws|worst'
  echo "exit ${PIPESTATUS[0]}"
  echo "== A: $B -r 5 (greedy, context 129) at $(el) s"
  $B -r 5 2>&1 | grep -vE '^  '
  echo "== B: $B -r 5 --temp 0.7 (context 129) at $(el) s"
  $B -r 5 --temp 0.7 2>&1 | grep -vE '^  |tg128 \|'
  echo "== C: $B -r 5 --temp 0.7 --ctx 4096 (hark serve's context) at $(el) s"
  $B -r 5 --temp 0.7 --ctx 4096 2>&1 | grep -vE '^  |tg128 \|'
  echo "== D: greedy --ctx 4096 at $(el) s"
  $B -r 5 --ctx 4096 2>&1 | grep -vE '^  |tg128 \|'
  echo "== profile (HARK_CUDA_PROFILE=1: graphs off, kernels timed): greedy at $(el) s"
  HARK_CUDA_PROFILE=1 $B -r 2 2>&1 | grep -A16 'tg128 chained profile'
  echo "== profile: --temp 0.7 --ctx 4096 at $(el) s"
  HARK_CUDA_PROFILE=1 $B -r 2 --temp 0.7 --ctx 4096 2>&1 | grep -A16 'chained temp 0.7 profile'
  ln -sf $F /w/models/smollm2-shape-q8_0.gguf
  echo "== hark serve --backend cuda, streamed chat through bench/serve/streamspeed at $(el) s"
  ./hark serve --models-dir /w/models --backend cuda --addr 127.0.0.1:18089 > $OUT/serve.log 2>&1 &
  P=$!
  for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/18089) 2>/dev/null && break; sleep 0.2; done
  ./streamspeed -url http://127.0.0.1:18089 -model smollm2-shape-q8_0 -reps 5 -n 128
  kill $P; wait $P
  echo "== done at $(el) s"
} > $OUT/serve-cuda.log 2>&1
cat $OUT/serve-cuda.log
