#!/bin/bash
# Final check, call 3 of 3 (g1-g2's machine, g1's cubins in the checkout): the GPU tests of the merged main: msltest
# through CUDA with the device's tuning (every test but the long form and the fixed-point exp table) and cuda's GPU
# tests, in normal, permuted-block and NaN-poisoned runs; cuda's tests with the paged attention split at 32-key chunks
# and the values batched (split38); BenchmarkGPUBatchStep and BenchmarkGPUPromptBeside with the split (default),
# values batched, half the split's grid, and the split off (issue #38). $K holds cuda.test.xz,
# msltest.test.xz, msltest.run (the msltest names); g2 wrote the SmolLM2-shape files.
set -u
R=$(pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=${W:-/w/s18}
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT; [ -d $W/shared/llm-kit ] || { echo "not g1-g2's machine"; exit 3; }
W=$W bash bench/cuda/20261201-s17/stage.sh > /dev/null
cd $W && cp -n q8.bin shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
MR=$(cat msltest.run)
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261201";; poison) echo "HARK_CUDA_POISON=1";; esac; }
{ echo "== TestCubinGuard at $(el) s"; ./cuda.test -test.run '^TestCubinGuard$' -test.v 2>&1 | tail -2
  for mode in normal permuted poison; do
    E=$(modeenv $mode)
    echo "== msltest $mode ($E), device tuning, at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 150 ./msltest.test -test.run "^($MR)\$" -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$mode.v.log | grep -v -- '--- PASS' | head -20
    echo "passed: $(grep -c -- '--- PASS' $OUT/msltest-$mode.v.log)"
    G='^TestGPU(StoriesReplay|BatchEqualsSequential|SharedByTwoModels|.*Halt.*)$'; [ $mode = normal ] && G='^TestGPU(Errors|StoriesReplay|BatchEqualsSequential|SharedByTwoModels|CopyBandwidth|.*Halt.*)$'
    echo "== cuda.test $mode ($E) at $(el) s"
    env $E timeout 120 ./cuda.test -test.run "$G" -test.v -test.count=1 > $OUT/cuda-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/cuda-$mode.v.log | grep -v -- '--- PASS' | head -12
    echo "passed: $(grep -c -- '--- PASS' $OUT/cuda-$mode.v.log)"
    echo "== cuda.test $mode, paged split at 32-key chunks, values batched (HARK_CUDA_TUNE=AttnPagedChunk=32,AttnPagedValues=2) at $(el) s"
    env $E HARK_CUDA_TUNE=AttnPagedChunk=32,AttnPagedValues=2 timeout 100 ./cuda.test -test.run '^TestGPUBatchEqualsSequential$' -test.v -test.count=1 > $OUT/cuda32-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/cuda32-$mode.v.log | head -8
  done
  echo "== done at $(el) s"
} > $OUT/g3-tests.log 2>&1
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf; mkdir -p m

{ for T in "" AttnPagedValues=2 AttnPagedSplitGroups=8 AttnPagedChunk=4194304; do
    [ -f $F ] || { echo "no $F (hark not staged yet): benches skipped"; break; }
    echo "== BenchmarkGPUBatchStep, HARK_CUDA_TUNE=$T, at $(el) s"
    HARK_CUDA_TUNE=$T HARK_BENCH_MATMUL_ROWS=17 HARK_BENCH_MODEL=$F timeout 60 ./cuda.test -test.run '^$' -test.bench GPUBatchStep -test.benchtime 256x 2>&1 | grep -E '^Benchmark|ms'
    echo "== BenchmarkGPUPromptBeside, HARK_CUDA_TUNE=$T, at $(el) s"
    HARK_CUDA_TUNE=$T HARK_BENCH_MATMUL_ROWS=17 HARK_BENCH_MODEL=$F timeout 60 ./cuda.test -test.run '^$' -test.bench GPUPromptBeside -test.benchtime 64x 2>&1 | grep -E '^Benchmark|ms'
  done; echo "== done at $(el) s"; } > $OUT/g3-bench.log 2>&1
(cd $OUT && tar -czf g3-test-logs.tgz *.v.log && rm *.v.log)
cat $OUT/g3-tests.log $OUT/g3-bench.log
