#!/bin/bash
# GPU call for issue 35, second part (bench/cuda/20261129-issue35-r2/): the tensor-core flash attention
# (cuda/native/attention_mma.cu, attention_mma_tc_*) against the float64 reference and the CPU in normal,
# permuted-block and NaN-poisoned runs, the end-to-end tests with it, then the Whisper encoder with and without
# the native module and its profile, and pp512 on the SmolLM2 shape. Structure of ../20261129-issue35/call.sh.
# Run from a folder holding hark.xz, cuda.test.xz, msltest.test.xz, data.tar.xz, wq8.xz. $GPUTESTS (call2.sh)
# narrows the cuda package's GPU tests.
set -u
K=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in hark cuda.test msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
( ./hark bench llm --backend cpu --dir /w/m --type q8_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8; ls -la /w/m ) > $OUT/write.log 2>&1 &
W=$!
CH='AttentionTensorCores|AttentionKernel|MatMulTensorCores|E2EStories|E2EWhisperJFK'
{ nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.sm,clocks.mem --format=csv
  echo "== cuda.test ^TestGPU at $(el) s"; timeout 100 ./cuda.test -test.run "${GPUTESTS:-^TestGPU}" -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|native'; echo "exit ${PIPESTATUS[0]}"
  for mode in normal permuted poison nonative; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261129";; poison) E="HARK_CUDA_POISON=1";; nonative) E="HARK_CUDA_NATIVE=0";; esac
    T=MatMulMMA=16,AttnMMA=1; [ $mode = nonative ] && T=
    echo "== msltest $mode ($E, HARK_MSLTEST_TUNE=$T) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_TUNE=$T timeout 100 ./msltest.test -test.run "^Test($CH)\$" -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|attention_mma|tensor-core|\.go:[0-9]+: ' $OUT/msltest-$mode.v.log | grep -v 'mat_mul' | head -60
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
wait $W
M=/w/m/smollm2-135m-shape-v1-L30
{ echo "== whisper at $(el) s"; ./hark bench whisper --backend cuda -r 5 2>&1
  echo "== whisper HARK_CUDA_NATIVE=0 at $(el) s"; HARK_CUDA_NATIVE=0 ./hark bench whisper --backend cuda -r 5 2>&1
  echo "== whisper profile at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench whisper --backend cuda -r 2 2>&1
  for f in q8_0 f16; do echo "== hark $f pp512 at $(el) s"; ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 512 --tg 0 2>&1; done
  echo "== q8_0 pp512, HARK_CUDA_NATIVE=0 at $(el) s"; HARK_CUDA_NATIVE=0 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 3 --pp 512 --tg 0 2>&1
  echo "== q8_0 pp512 profile at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 512 --tg 0 2>&1
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
cat $OUT/tests.log; grep -vE '^  (rope|embed|mat_vec|layer|gelu|add|rms|silu|argmax|copy|softmax)' $OUT/timed.log | grep -vE '^(samples|load average)' | tail -150
echo "== end at $(el) s"
