#!/bin/bash
# Issue #38 on the H200 (2026-12-01, eighteenth session, branch stall38), first call: this branch's hark and
# cuda.test. Writes the SmolLM2-shape q8_0 file (kept in /w/m for call2 on the same warm machine), runs cuda's batch
# tests (normal; the first CUDA process JIT-compiles this branch's PTX), times BenchmarkGPUBatchStep and
# BenchmarkGPUPromptBeside with attention_paged_rows (the default) and without it (HARK_CUDA_TUNE=
# AttnPagedRowsFrom=1000000: main's attention_paged for every row), hark serve --batch-gpu --ctx 8192 against
# hark bench serve --concurrency 4,4 --long-prompt 4000 --long-after 16 with this branch's defaults, with main's
# kernel and whole-budget chunks (HARK_BATCH_PROMPT_BESIDE=128), and --concurrency 1,16,1,16, then the tests with
# permuted blocks and NaN-poisoned scratch. From the repository root with $K holding hark.xz, cuda.test.xz and
# data.tar.xz.
set -u
K=${K:-.gpu/stall38a}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/models /w/m && cd /w
for b in hark cuda.test; do xz -T4 -dc $K/$b.xz > $b && chmod +x $b; done
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
OLD=AttnPagedRowsFrom=1000000
{ for T in "" $OLD; do
    echo "== BenchmarkGPUBatchStep, HARK_CUDA_TUNE=$T, at $(el) s"
    HARK_CUDA_TUNE=$T HARK_BENCH_MATMUL_ROWS=17 HARK_BENCH_MODEL=$F timeout 60 ./cuda.test -test.run '^$' -test.bench GPUBatchStep -test.benchtime 256x 2>&1
    echo "== BenchmarkGPUPromptBeside, HARK_CUDA_TUNE=$T, at $(el) s"
    HARK_CUDA_TUNE=$T HARK_BENCH_MATMUL_ROWS=17 HARK_BENCH_MODEL=$F timeout 60 ./cuda.test -test.run '^$' -test.bench GPUPromptBeside -test.benchtime 64x 2>&1
  done
  echo "== done at $(el) s"; } > $OUT/bench.log 2>&1
serve() { # $1: port, $2...: serve flags; then bench flags in $BF
  ./hark serve --models-dir /w/models --backend cuda --batch-gpu --timeout 5m --addr 127.0.0.1:$1 "${@:2}" > $OUT/hserve-$1.log 2>&1 &
  P=$!
  for i in $(seq 300); do (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null && break; sleep 0.2; done
  timeout 60 ./hark bench serve --url http://127.0.0.1:$1 --model smollm2-shape-q8_0 $BF 2>&1
  kill $P; wait $P; }
LBF="--concurrency 4,4 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 --long-prompt 4000 --long-after 16"
{ echo "== long prompt beside 4 streams, this branch (PromptBeside 12, attention_paged_rows) at $(el) s"
  BF=$LBF serve 18091 --ctx 8192
  echo "== the same with main's kernel and whole-budget chunks (HARK_CUDA_TUNE=$OLD HARK_BATCH_PROMPT_BESIDE=128) at $(el) s"
  HARK_CUDA_TUNE=$OLD HARK_BATCH_PROMPT_BESIDE=128 BF=$LBF serve 18092 --ctx 8192
  echo "== this branch's kernel, whole-budget chunks (HARK_BATCH_PROMPT_BESIDE=128) at $(el) s"
  HARK_BATCH_PROMPT_BESIDE=128 BF=$LBF serve 18093 --ctx 8192
  echo "== this branch, PromptBeside 28 at $(el) s"
  HARK_BATCH_PROMPT_BESIDE=28 BF=$LBF serve 18094 --ctx 8192
  echo "== this branch, --ctx 8192, --concurrency 1,16,1,16 at $(el) s"
  BF="--concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7" serve 18095 --ctx 8192
  echo "== done at $(el) s"; } > $OUT/serve.log 2>&1
{ tests permuted; tests poison; echo "== tests done at $(el) s"; } >> $OUT/tests.log 2>&1
cat $OUT/write.log $OUT/tests.log $OUT/bench.log $OUT/serve.log
(cd $OUT && tar -czf logs.tgz *.v.log hserve-*.log && rm *.v.log hserve-*.log)
