#!/bin/bash
# GPU call for issue 35, third round (bench/cuda/20261130-issue35-r3/): conv1d on tensor cores
# (conv1d_mma_*) and the prmt/f16x2 weight conversion in mat_mul_mma, against the CPU in normal,
# permuted-block and NaN-poisoned runs and with HARK_CUDA_NATIVE=0; then the Whisper encoder (with and
# without the native module, its profile), pp512 on the SmolLM2 shape, and the encoder's kernels under
# Nsight Compute plus ptxas's resource report (what the next change should target). Structure of
# ../20261129-issue35-r2/call.sh. Run from a folder holding hark.xz, msltest.test.xz, data.tar.xz, wq8.xz,
# sm80.ptx.xz (and cuda.test.xz when $GPUTESTS is set); the base module's PTX is the checkout's cuda/kernels.ptx.
set -u
K=$(cd "$(dirname "$0")" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in hark msltest.test cuda.test; do [ -f $K/$b.xz ] && xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
xz -dc $K/sm80.ptx.xz > sm80.ptx
export HARK_TESTDATA=/w/shared PATH=$PATH:/usr/local/cuda/bin
TOK=/w/shared/llm-kit/tokenizers/smollm2
( ./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8; ls -la /w/m ) > $OUT/write.log 2>&1 &
W=$!
( E="-e hark_gelu -e hark_add -e hark_layer_norm"
  echo "== ptxas sm_90, base module entries"; ptxas -arch=sm_90 -v $E $R/cuda/kernels.ptx -o /dev/null 2>&1 | grep -A1 -E "Compiling entry|Function properties" | grep -vE '^--$'
  echo "== ptxas sm_90, native module"; ptxas -arch=sm_90 -v sm80.ptx -o /dev/null 2>&1 | grep -E "Compiling entry|registers|stack frame" ) > $OUT/ptxas.log 2>&1 &
P=$!
CH='Conv1DTensorCores|Conv1DAllTypes|MatMulTensorCores|MatMulAllTypes|AttentionTensorCores|AttentionKernel|E2EStories|E2EWhisperJFK'
{ nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.sm,clocks.mem --format=csv
  if [ -x cuda.test ]; then echo "== cuda.test ${GPUTESTS:-^TestGPU} at $(el) s"; timeout 100 ./cuda.test -test.run "${GPUTESTS:-^TestGPU}" -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|native'; echo "exit ${PIPESTATUS[0]}"; fi
  for mode in normal permuted poison nonative; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261130";; poison) E="HARK_CUDA_POISON=1";; nonative) E="HARK_CUDA_NATIVE=0";; esac
    T=MatMulMMA=16,AttnMMA=1; [ $mode = nonative ] && T=
    echo "== msltest $mode ($E, HARK_MSLTEST_TUNE=$T) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_TUNE=$T timeout 120 ./msltest.test -test.run "^Test($CH)\$" -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|_mma|tensor-core' $OUT/msltest-$mode.v.log | grep -vE 'mat_mul_(f|q|b|i)' | head -80
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
(cd $OUT && tar -czf msltest-logs.tgz msltest-*.v.log && rm msltest-*.v.log) # at most 8 files come back
wait $W
M=/w/m/smollm2-135m-shape-v1-L30
{ echo "== whisper at $(el) s"; ./hark bench whisper --backend cuda -r 5 2>&1
  echo "== whisper HARK_CUDA_NATIVE=0 at $(el) s"; HARK_CUDA_NATIVE=0 ./hark bench whisper --backend cuda -r 3 2>&1
  echo "== whisper profile at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench whisper --backend cuda -r 2 2>&1
  for f in q8_0 q4_0 f16; do echo "== hark $f pp512 at $(el) s"; ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 512 --tg 0 2>&1; done
  for f in q8_0 q4_0; do echo "== $f pp512 profile at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $M-$f.gguf -r 1 --pp 512 --tg 0 2>&1; done
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
{ echo "== ncu ($NCU) at $(el) s"; HARK_CUDA_GRAPHS=0 timeout 150 $NCU --clock-control none -k regex:'^hark_(attention_mma_tc_f32|gelu|add|conv1d_mma_f16|mat_mul_mma_q8_0|layer_norm)$' --launch-count 14 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
    ./hark bench whisper --backend cuda -r 1 2>&1; echo "exit $? at $(el) s"; } > $OUT/ncu.log 2>&1
wait $P
cat $OUT/tests.log; grep -vE '^  (rope|embed|mat_vec|argmax|copy|softmax|silu|rms)' $OUT/timed.log | grep -vE '^(samples|load average)' | tail -120
cat $OUT/ptxas.log | head -60
grep -E '^  hark_|Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Local|Stall|No Eligible|Block Limit|Dynamic Shared|exit' $OUT/ncu.log | head -150
echo "== end at $(el) s"
