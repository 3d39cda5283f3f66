#!/bin/bash
# GPU call for issue 35 (bench/cuda/20261129-issue35/): the tensor-core mat_mul (cuda/native/mat_mul_mma.cu, the
# sm_80 module) against the CPU in normal, permuted-block and NaN-poisoned runs, the end-to-end tests with it, then
# pp512 on the SmolLM2 shape, the Whisper encoder, and the 4096x4096x512 GEMM beside torch.mm bf16.
# Run from a folder holding hark.xz, cuda.test.xz, msltest.test.xz, data.tar.xz, wq8.xz.
set -u
K=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in hark cuda.test msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
( ./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8; ls -la /w/m ) > $OUT/write.log 2>&1 &
W=$!
CH='MatMulTensorCores|MatMulAllTypes|Conv1DAllTypes|E2EStories|E2EWhisperJFK'
{ nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.sm,clocks.mem --format=csv
  echo "== cuda.test ^TestGPU at $(el) s"; timeout 150 ./cuda.test -test.run '^TestGPU' -test.v -test.count=1 2>&1 | grep -E '^(=== RUN|\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|launches|native'; echo "exit ${PIPESTATUS[0]}"
  for mode in normal permuted poison; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261129";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== msltest $mode ($E, HARK_MSLTEST_TUNE=MatMulMMA=16) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_TUNE=MatMulMMA=16 timeout 120 ./msltest.test -test.run "^Test($CH)\$" -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|mat_mul|kernels run on|\.go:[0-9]+:'; echo "exit ${PIPESTATUS[0]}"
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
wait $W
M=/w/m/smollm2-135m-shape-v1-L30
{ for f in q8_0 q4_0 f16; do echo "== hark $f pp512 at $(el) s"; ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 512 --tg 0 2>&1; done
  echo "== q8_0 pp512, HARK_CUDA_NATIVE=0 (the translated mat_mul) at $(el) s"; HARK_CUDA_NATIVE=0 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 3 --pp 512 --tg 0 2>&1
  echo "== q8_0 pp512 profile at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 512 --tg 0 2>&1
  echo "== whisper at $(el) s"; ./hark bench whisper --backend cuda 2>&1
  echo "== whisper HARK_CUDA_NATIVE=0 at $(el) s"; HARK_CUDA_NATIVE=0 ./hark bench whisper --backend cuda 2>&1
  echo "== whisper profile at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench whisper --backend cuda -r 2 2>&1
  echo "== GEMM 4096x4096x512 at $(el) s"; ./cuda.test -test.run XXX -test.bench GPUMatMul -test.benchtime 10x 2>&1
  echo "== torch.mm bf16 at $(el) s"; PYTHONUNBUFFERED=1 python3 -c '
import torch
def bench(m, n, k, it=50):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16); b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(5): torch.mm(a, b)
    torch.cuda.synchronize(); s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(it): torch.mm(a, b)
    e.record(); torch.cuda.synchronize(); ms = s.elapsed_time(e) / it
    print(f"torch.mm bf16 m={m} n={n} k={k}: {ms:.4f} ms, {2*m*n*k/ms/1e9:.1f} TFLOP/s")
bench(8192, 8192, 8192); bench(512, 4096, 4096, 200)' 2>&1
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
cat $OUT/tests.log; grep -vE '^  (rope|embed|mat_vec|layer|gelu|add|rms|silu|attention|argmax|copy|softmax)' $OUT/timed.log | grep -vE '^(samples|load average)' | tail -120
echo "== end at $(el) s"
