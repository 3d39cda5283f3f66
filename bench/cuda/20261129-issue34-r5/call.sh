#!/bin/bash
# GPU call for issue 34 round 5 (bench/cuda/20261129-issue34-r5/): q8_0/q4_0 weights repacked at upload for
# 16-byte quant loads (shaders/repack.go), and decode attention's split merged in one threadgroup up to 1024 keys
# (attention_group, Tuning.AttnGroupKeys). The GPU tests (cuda package; msltest's repacked-weights kernel test and
# the end-to-end tests in normal, permuted-block and NaN-poisoned runs), then the benches with the cuda family
# and with each change off in the same run (HARK_CUDA_TUNE=Repack=1: the file layout; AttnGroupKeys=1: the split
# and its merge): SmolLM2 shape tg128 q8_0/q4_0/f16,
# launches per token, profile, Whisper, the 1B shape. Run from a folder holding hark.xz, cuda.test.xz,
# msltest.test.xz, data.tar.xz, wq8.xz.
set -u
K=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in hark cuda.test msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
( ./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 4
  ./hark bench llm --backend cpu --shape llama-1b --dir /w/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 4; ls -la /w/m ) > $OUT/write.log 2>&1 &
W=$!
CH='RepackedWeights|MatVecAllTypes|MatMulTensorCores|AttentionKernel|KernelsOtherTunings|E2EStories|E2EWhisperJFK'
{ nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.sm,clocks.mem --format=csv
  echo "== cuda.test ^TestGPU at $(el) s"; timeout 120 ./cuda.test -test.run '^TestGPU' -test.v -test.count=1 2>&1 | grep -E '^(=== RUN|--- |ok|FAIL|PASS|panic)|GB/s|Error|launches'; echo "exit ${PIPESTATUS[0]}"
  for mode in normal permuted poison; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261129";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== msltest $mode ($E) at $(el) s"; env $E HARK_MSLTEST_DEVICE=cuda timeout 120 ./msltest.test -test.run "^Test($CH)\$" -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|_rp|exact'; echo "exit ${PIPESTATUS[0]}"
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
wait $W
M=/w/m/smollm2-135m-shape-v1-L30
B=/w/m/llama-1b-shape-v1-L16
{ for f in q8_0 q4_0 f16; do echo "== hark $f at $(el) s"; ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 512 --tg 128 --chain 2>&1; done
  for f in q8_0 q4_0; do echo "== hark $f, file layout (HARK_CUDA_TUNE=Repack=1) at $(el) s"; HARK_CUDA_TUNE=Repack=1 ./hark bench llm --backend cuda --model $M-$f.gguf -r 3 --pp 512 --tg 128 2>&1 | grep -E '^\| llama'; done
  for v in AttnGroupKeys=1; do echo "== hark q8_0 HARK_CUDA_TUNE=$v at $(el) s"; HARK_CUDA_TUNE=$v ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 3 --pp 512 --tg 128 2>&1 | grep -E '^\| llama'; done
  echo "== launches, HARK_CUDA_GRAPHS=0 at $(el) s"; HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1
  echo "== launches, HARK_CUDA_GRAPHS=0 HARK_CUDA_TUNE=AttnGroupKeys=1 at $(el) s"; HARK_CUDA_GRAPHS=0 HARK_CUDA_TUNE=AttnGroupKeys=1 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -E 'cuda tg128|^\| llama'
  echo "== profile at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1
  echo "== whisper at $(el) s"; ./hark bench whisper --backend cuda 2>&1; for v in Repack=1 AttnGroupKeys=1; do echo "-- HARK_CUDA_TUNE=$v"; HARK_CUDA_TUNE=$v ./hark bench whisper --backend cuda 2>&1 | grep -E "^\| ggml"; done; HARK_CUDA_PROFILE=1 ./hark bench whisper --backend cuda -r 2 2>&1
  for f in q8_0 q4_0; do echo "== 1B $f at $(el) s"; ./hark bench llm --backend cuda --model $B-$f.gguf -r 3 --pp 512 --tg 128 2>&1; HARK_CUDA_TUNE=Repack=1 ./hark bench llm --backend cuda --model $B-$f.gguf -r 3 --pp 512 --tg 128 2>&1 | grep -E '^\| llama'; done
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
cat $OUT/tests.log; grep -vE '^  (rope|embed|mat_vec|layer|gelu|add|mat_mul|silu)' $OUT/timed.log | grep -vE '^(samples|load average)' | tail -150
echo "== end at $(el) s"
