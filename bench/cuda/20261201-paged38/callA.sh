#!/bin/bash
# Issue #38 on the H200 (2026-12-01, seventeenth session, branch paged38), first call: this branch's hark and
# cuda.test. Writes the SmolLM2-shape q8_0 file (kept in /w/m for the second call on the same warm machine), runs
# the cuda package's batch tests (normal; the first CUDA process JIT-compiles this branch's PTX), times and profiles
# BenchmarkGPUBatchStep, runs hark serve --batch-gpu against hark bench serve --concurrency 1,16,1,16, then the
# 4,000-token prompt beside 4 streams (--ctx 8192, hark bench serve --long-prompt 4000), then the batch tests with
# permuted blocks and NaN-poisoned scratch. Run from the repository root with $K holding hark.xz, cuda.test.xz and
# data.tar.xz (bench/cuda/20261201-paged38/README.md).
set -u
K=${K:-.gpu/paged38a}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/models && cd /w
for b in hark cuda.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
TOK=/w/shared/llm-kit/tokenizers/smollm2
F=/w/m/smollm2-135m-shape-v1-L30-q8_0.gguf
( nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; ./hark --version
  [ -f $F ] || ./hark bench llm --backend cpu --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 ) > $OUT/write.log 2>&1
ln -sf $F /w/models/smollm2-shape-q8_0.gguf
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261201";; poison) echo "HARK_CUDA_POISON=1";; esac; }
tests() { # $1: mode
  E=$(modeenv $1)
  echo "== cuda.test $1 ($E) at $(el) s"
  env $E timeout 150 ./cuda.test -test.run '^TestGPU(StoriesReplay|BatchEqualsSequential)$' -test.v -test.count=1 > $OUT/cuda-$1.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|peak' $OUT/cuda-$1.v.log | head -20; }
tests normal > $OUT/tests.log 2>&1
{ echo "== BenchmarkGPUBatchStep, this branch, at $(el) s"
  HARK_BENCH_MODEL=$F timeout 60 ./cuda.test -test.run '^$' -test.bench GPUBatchStep -test.benchtime 256x -test.count 2 2>&1
  echo "== the same, HARK_CUDA_PROFILE=1 (graphs off) at $(el) s"
  HARK_CUDA_PROFILE=1 HARK_BENCH_MODEL=$F timeout 60 ./cuda.test -test.run '^$' -test.bench GPUBatchStep -test.benchtime 128x 2>&1
  echo "== done at $(el) s"; } > $OUT/batchstep.log 2>&1
serve() { # $1: port, $2...: serve flags; then bench flags in $BF
  ./hark serve --models-dir /w/models --backend cuda --batch-gpu --timeout 5m --addr 127.0.0.1:$1 "${@:2}" > $OUT/hserve-$1.log 2>&1 &
  P=$!
  for i in $(seq 300); do (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null && break; sleep 0.2; done
  timeout 90 ./hark bench serve --url http://127.0.0.1:$1 --model smollm2-shape-q8_0 $BF 2>&1
  kill $P; wait $P; }
{ echo "== hark serve --backend cuda --batch-gpu; hark bench serve --concurrency 1,16,1,16 at $(el) s"
  BF="--concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7" serve 18090
  echo "== hark serve --backend cuda --batch-gpu --ctx 8192; 4 streams and one 4,000-token prompt at $(el) s"
  BF="--concurrency 4,4,4 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 --long-prompt 4000 --long-after 16" serve 18091 --ctx 8192
  echo "== done at $(el) s"; } > $OUT/serve.log 2>&1
{ tests permuted; tests poison; echo "== tests done at $(el) s"; } >> $OUT/tests.log 2>&1
cat $OUT/write.log $OUT/tests.log $OUT/batchstep.log $OUT/serve.log
(cd $OUT && tar -czf test-logs.tgz *.v.log hserve-*.log && rm *.v.log hserve-*.log)
