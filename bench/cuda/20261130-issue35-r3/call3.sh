#!/bin/bash
# Third GPU call for issue 35, third round: the binaries with the 4-wide f32 tile loads of attention_mma_tc
# beside calls 1-2's changes. The cuda package's GPU tests and every msltest test on CUDA in normal,
# permuted-block and NaN-poisoned runs (the tensor-core tuning), subsets with HARK_CUDA_NATIVE=0; then the
# timings of call2.sh and Nsight Compute on the encoder's attention. Run from a folder holding data.tar.xz,
# wq8.xz and cuda.test.xz + msltest.test.xz (the tests) or hark.xz (the timings): the three binaries and the
# model exceed what one call carries, so the two parts ran as two calls back to back (call3-tests-*,
# call3-timed-*).
set -u
K=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in hark cuda.test msltest.test; do [ -f $K/$b.xz ] && xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared PATH=$PATH:/usr/local/cuda/bin
TOK=/w/shared/llm-kit/tokenizers/smollm2
[ -x hark ] && ( ./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8; ls -la /w/m ) > $OUT/write.log 2>&1 &
W=$!
CH='Conv1DTensorCores|Conv1DAllTypes|MatMulTensorCores|MatMulAllTypes|AttentionTensorCores|AttentionKernel|E2EStories|E2EWhisperJFK|MatrixGGMLKit'
[ -x msltest.test ] && { nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.sm,clocks.mem --format=csv
  for mode in normal permuted poison nonative; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261130";; poison) E="HARK_CUDA_POISON=1";; nonative) E="HARK_CUDA_NATIVE=0";; esac
    G='^TestGPU(StoriesReplay|SharedByTwoModels)$'; [ $mode = normal ] && G='^TestGPU(Errors|StoriesReplay|SharedByTwoModels)$'
    echo "== cuda.test $mode ($E, -run $G) at $(el) s"
    env $E timeout 100 ./cuda.test -test.run "$G" -test.v -test.count=1 > $OUT/cuda-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/cuda-$mode.v.log | head -20
    T=MatMulMMA=16,AttnMMA=1; R='.'; [ $mode = nonative ] && T= && R="^Test($CH)\$"
    echo "== msltest $mode ($E, HARK_MSLTEST_TUNE=$T, -run $R) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_TUNE=$T timeout 170 ./msltest.test -test.run "$R" -test.skip 'LongForm' -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(--- |ok|FAIL|PASS|panic)' $OUT/msltest-$mode.v.log | grep -vE '^--- PASS' | head -20; echo "$(grep -c '^--- PASS' $OUT/msltest-$mode.v.log) top-level tests passed"
    grep -E 'attention_mma_tc_f32 .*aligned=true' $OUT/msltest-$mode.v.log | head -3
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
[ -x msltest.test ] && (cd $OUT && tar -czf test-logs.tgz msltest-*.v.log cuda-*.v.log && rm msltest-*.v.log cuda-*.v.log) # at most 8 files come back
[ -x hark ] || { cat $OUT/tests.log; exit 0; }
wait $W
M=/w/m/smollm2-135m-shape-v1-L30
{ echo "== whisper at $(el) s"; ./hark bench whisper --backend cuda -r 5 2>&1
  echo "== whisper again at $(el) s"; ./hark bench whisper --backend cuda -r 5 2>&1
  echo "== whisper HARK_CUDA_NATIVE=0 at $(el) s"; HARK_CUDA_NATIVE=0 ./hark bench whisper --backend cuda -r 3 2>&1
  echo "== whisper profile at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench whisper --backend cuda -r 2 2>&1
  for f in q8_0 q4_0 f16; do echo "== hark $f pp512 at $(el) s"; ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 512 --tg 0 2>&1; done
  for f in q8_0 q4_0 f16; do echo "== hark $f pp512 again at $(el) s"; ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 512 --tg 0 2>&1; done
  echo "== q8_0 pp512 HARK_CUDA_NATIVE=0 at $(el) s"; HARK_CUDA_NATIVE=0 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 3 --pp 512 --tg 0 2>&1
  for f in q8_0 q4_0; do echo "== $f pp512 profile at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $M-$f.gguf -r 1 --pp 512 --tg 0 2>&1; done
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
{ echo "== ncu ($NCU) at $(el) s"; HARK_CUDA_GRAPHS=0 timeout 90 $NCU --clock-control none -k regex:'^hark_attention_mma_tc_f32$' --launch-count 2 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
    ./hark bench whisper --backend cuda -r 1 2>&1; echo "exit $? at $(el) s"; } > $OUT/ncu.log 2>&1
grep -vE '^  (rope|embed|mat_vec|argmax|copy|softmax|silu|rms)' $OUT/timed.log | grep -vE '^(samples|load average|\| model|\| ---)' | tail -80
grep -E '^  hark_|Duration|Registers Per|Achieved Occupancy|Issued Warp|Warp Cycles Per Issued|exit' $OUT/ncu.log | head -30
echo "== end at $(el) s"
