#!/bin/bash
# Issue #38 on the H200 (2026-12-01, eighteenth session, branch split38): attention_paged split over a row's keys
# (Tuning.AttnPagedChunk; the last chunk of a row to finish merges, by ticket). For the lead's final call, with the
# binaries built from the merged main. From the repository root (its cuda/cubin) with $K holding hark.xz,
# cuda.test.xz, msltest.test.xz and data.tar.xz (README.md beside this file says how they are made):
#
#     K=.gpu/split38 bash .gpu/split38/call.sh
#
# Writes the SmolLM2-shape q8_0 file; runs cuda's TestGPUBatchEqualsSequential (as shipped, and with chunks of 32 keys
# and the value loop batched, so that its rows split) and msltest's paged kernels and batch engine through CUDA (the
# split at several chunk sizes, both value loops; the first CUDA process JIT-compiles the PTX if the cubins were not
# rebuilt from it); times BenchmarkGPUBatchStep (1, 4, 16 rows) and BenchmarkGPUPromptBeside with the split (the
# default), with the value loop batched (HARK_CUDA_TUNE=AttnPagedValues=2), with half the split's grid cap
# (AttnPagedSplitGroups=8: fewer threadgroups that return at once, fewer chunks a deep row) and without the split
# (AttnPagedChunk=4194304: one threadgroup a row, main's launch and kernel arithmetic); hark serve --backend cuda
# --batch-gpu --ctx 8192 against hark bench serve --concurrency 4,4 --long-prompt 4000 --long-after 16 and
# --concurrency 1,16; then the tests again with permuted blocks and NaN-poisoned scratch. $LONG=1 adds the long prompt
# with the values batched, with the split off and with PromptBeside 28 (HARK_BATCH_PROMPT_BESIDE; ~75 s more).
set -u
K=${K:-.gpu/split38}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/models /w/m && cd /w
for b in hark cuda.test msltest.test; do [ -f $K/$b.xz ] && xz -T4 -dc $K/$b.xz > $b && chmod +x $b; done # (msltest.test: optional)
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
TOK=/w/shared/llm-kit/tokenizers/smollm2
F=/w/m/smollm2-135m-shape-v1-L30-q8_0.gguf
( nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; ./hark --version
  [ -f $F ] || ./hark bench llm --backend cpu --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 ) > $OUT/write.log 2>&1
ln -sf $F /w/models/smollm2-shape-q8_0.gguf
OFF=AttnPagedChunk=4194304
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261201";; poison) echo "HARK_CUDA_POISON=1";; esac; }
tests() { # $1: mode
  E=$(modeenv $1)
  echo "== cuda.test $1 ($E) at $(el) s"
  env $E timeout 150 ./cuda.test -test.run '^TestGPUBatchEqualsSequential$' -test.v -test.count=1 > $OUT/cuda-$1.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/cuda-$1.v.log | head -20
  echo "== the same with chunks of 32 keys, values batched (HARK_CUDA_TUNE=AttnPagedChunk=32,AttnPagedValues=2) at $(el) s"
  env $E HARK_CUDA_TUNE=AttnPagedChunk=32,AttnPagedValues=2 timeout 100 ./cuda.test -test.run '^TestGPUBatchEqualsSequential$' -test.v -test.count=1 > $OUT/cuda32-$1.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/cuda32-$1.v.log | head -20
  echo "== msltest paged kernels through CUDA, $1 ($E) at $(el) s"
  [ -x ./msltest.test ] || { echo "(no msltest.test.xz carried: not run)"; return; }
  env $E HARK_MSLTEST_DEVICE=cuda timeout 120 ./msltest.test -test.run '^Test(AttentionPagedKernel|AttentionPagedSplit|AttentionPagedSplitGrid|PagedKernelsBadRow|RopeKVPagedKernel|E2EBatchPagedSplit)$' \
    -test.v -test.count=1 > $OUT/msl-$1.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|worst|rows split' $OUT/msl-$1.v.log | head -30; }
tests normal > $OUT/tests.log 2>&1
{ for T in "" AttnPagedValues=2 AttnPagedSplitGroups=8 $OFF; do
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
{ echo "== long prompt beside 4 streams, split (main's defaults otherwise) at $(el) s"
  BF=$LBF serve 18091 --ctx 8192
  echo "== --concurrency 1,16, split at $(el) s"
  BF="--concurrency 1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7" serve 18092 --ctx 8192
  if [ "${LONG:-0}" = 1 ]; then
    echo "== long prompt beside 4 streams, split, values batched (HARK_CUDA_TUNE=AttnPagedValues=2) at $(el) s"
    HARK_CUDA_TUNE=AttnPagedValues=2 BF=$LBF serve 18095 --ctx 8192
    echo "== long prompt beside 4 streams, split off (HARK_CUDA_TUNE=$OFF) at $(el) s"
    HARK_CUDA_TUNE=$OFF BF=$LBF serve 18093 --ctx 8192
    echo "== long prompt beside 4 streams, split, PromptBeside 28 (HARK_BATCH_PROMPT_BESIDE=28) at $(el) s"
    HARK_BATCH_PROMPT_BESIDE=28 BF=$LBF serve 18094 --ctx 8192
  fi
  echo "== done at $(el) s"; } > $OUT/serve.log 2>&1
{ tests permuted; tests poison; echo "== tests done at $(el) s"; } >> $OUT/tests.log 2>&1
cat $OUT/write.log $OUT/tests.log $OUT/bench.log $OUT/serve.log
(cd $OUT && tar -czf logs.tgz *.v.log hserve-*.log && rm *.v.log hserve-*.log)
