#!/bin/bash
# GPU call for issue 34 round 4 (bench/cuda/20261129-issue34-r4/): round 3's call.sh with the sweep replaced by the
# attention split's cap (HARK_CUDA_TUNE=AttnSplitGroups=N; 1000 is uncapped at these shapes) at 4096 cached keys.
# The GPU tests in normal, permuted-block and NaN-poisoned runs, then the benches (SmolLM2 shape, launches per token,
# profile, Whisper, 1B shape, depth 4096). Run from a folder holding hark.xz, cuda.test.xz, msltest.test.xz,
# data.tar.xz, wq8.xz.
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
CH='MatVecAllTypes|FusedMatVecAllTypes|MatVecTuning|KernelsOtherTunings|AttentionKernel|NormKernel.*|E2EStories|E2EWhisperJFK'
{ nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.sm,clocks.mem --format=csv
  echo "== cuda.test ^TestGPU at $(el) s"; timeout 120 ./cuda.test -test.run '^TestGPU' -test.v -test.count=1 2>&1 | grep -E '^(=== RUN|--- |ok|FAIL|PASS|panic)|GB/s|Error|launches'; echo "exit ${PIPESTATUS[0]}"
  for mode in normal permuted poison; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261129";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== msltest $mode ($E) at $(el) s"; env $E HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.run "^Test($CH)\$" -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual'; echo "exit ${PIPESTATUS[0]}"
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
wait $W
M=/w/m/smollm2-135m-shape-v1-L30
B=/w/m/llama-1b-shape-v1-L16
{ for f in q8_0 q4_0 f16; do echo "== hark $f at $(el) s"; ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 512 --tg 128 --chain 2>&1; done
  echo "== launches, HARK_CUDA_GRAPHS=0 at $(el) s"; HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1
  echo "== profile at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1
  echo "== whisper at $(el) s"; ./hark bench whisper --backend cuda 2>&1; HARK_CUDA_PROFILE=1 ./hark bench whisper --backend cuda -r 2 2>&1
  for f in q8_0 q4_0; do echo "== 1B $f at $(el) s"; ./hark bench llm --backend cuda --model $B-$f.gguf -r 3 --pp 512 --tg 128 2>&1; done
  echo "== 1B q8_0 depth 4096, split cap sweep (HARK_CUDA_TUNE) at $(el) s"
  for v in AttnSplitGroups=1000 AttnSplitGroups=2 "" AttnSplitGroups=8 AttnSplitGroups=16; do
    echo "-- HARK_CUDA_TUNE=$v"; HARK_CUDA_TUNE=$v ./hark bench llm --backend cuda --model $B-q8_0.gguf -r 3 --pp 512 --tg 128 --depth 4096 2>&1 | grep -E '^\| llama'; done
  echo "== 1B q8_0 depth 4096 profile at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $B-q8_0.gguf -r 1 --pp 512 --tg 128 --depth 4096 2>&1
  echo "== 1B q8_0 depth 4096 profile, uncapped (AttnSplitGroups=1000) at $(el) s"; HARK_CUDA_TUNE=AttnSplitGroups=1000 HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $B-q8_0.gguf -r 1 --pp 512 --tg 128 --depth 4096 2>&1 | grep -E 'attention|^\| llama'
  echo "== SmolLM2 q8_0 depth 4096: capped, uncapped at $(el) s"
  for v in "" AttnSplitGroups=1000; do
    echo "-- HARK_CUDA_TUNE=$v"; HARK_CUDA_TUNE=$v ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 3 --pp 512 --tg 128 --depth 4096 2>&1 | grep -E '^\| llama'; done
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
cat $OUT/tests.log; grep -vE '^  (rope|embed|mat_vec|layer|gelu|add|mat_mul)' $OUT/timed.log | grep -vE '^(samples|load average)' | tail -150
echo "== end at $(el) s"
