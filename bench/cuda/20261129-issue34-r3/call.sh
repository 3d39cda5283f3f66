#!/bin/bash
# GPU call for issue 34 round 3 (bench/cuda/20261129-issue34-r3/; call 1 ran it without the ptxas and ncu parts and
# swept "" MatVecSIMDGroups=2 MatVecSIMDGroups=8 MatVecRows=2 AttnChunk=64 AttnChunk=128 on the SmolLM2 shape only): the GPU tests in normal, permuted-block and
# NaN-poisoned runs, then the benches (SmolLM2 shape, launches per token, profile, Whisper, 1B shape, depth 4096).
# Run from a folder holding hark.xz, cuda.test.xz, msltest.test.xz, data.tar.xz, wq8.xz (call 2: and kernels.ptx.xz,
# for ptxas and a Nsight Compute pass at the end). Call 3: CALL3=1 (a shorter sweep, the 1B shape's wide-row knob) and
# no kernels.ptx.xz (the kernels were call 2's).
set -u
K=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
export PATH=$PATH:/usr/local/cuda/bin
for b in hark cuda.test msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
if [ -f $K/kernels.ptx.xz ]; then xz -dc $K/kernels.ptx.xz > kernels.ptx; ( ptxas -arch=sm_90 -O3 -v kernels.ptx -o sm90.cubin > $OUT/ptxas.txt 2>&1 ) & fi
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
{ echo "== geometry sweep, q8_0 tg128 -r 3 (HARK_CUDA_TUNE) at $(el) s"
  SW=("" "MatVecRows=1" "MatVecRows=3" "MatVecRows=4" "MatVecRows=2,MatVecSIMDGroups=2" "MatVecRows=2,MatVecSIMDGroups=8" "AttnChunk=64")
  SW1=("" "MatVecRows=1" "MatVecRows=4")
  if [ -n "${CALL3:-}" ]; then SW=("" "MatVecRows=2,MatVecSIMDGroups=2"); SW1=("" "MatVecRowsWide=2" "MatVecRowsWide=4,MatVecSIMDGroups=2"); fi
  for v in "${SW[@]}"; do
    echo "-- HARK_CUDA_TUNE=$v"; HARK_CUDA_TUNE=$v ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 3 --pp 0 --tg 128 2>&1 | grep -E '^\| llama'; done
  for v in "${SW1[@]}"; do
    echo "-- 1B q8_0, HARK_CUDA_TUNE=$v"; HARK_CUDA_TUNE=$v ./hark bench llm --backend cuda --model $B-q8_0.gguf -r 3 --pp 0 --tg 128 2>&1 | grep -E '^\| llama'; done
  for f in q8_0 q4_0 f16; do echo "== hark $f at $(el) s"; ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 512 --tg 128 --chain 2>&1; done
  echo "== launches, HARK_CUDA_GRAPHS=0 at $(el) s"; HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1
  echo "== launches, HARK_CUDA_GRAPHS=0 HARK_CUDA_TUNE=AttnChunk=128 at $(el) s"; HARK_CUDA_TUNE=AttnChunk=128 HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -E 'cuda tg128|^\| llama'
  echo "== profile at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1
  echo "== whisper at $(el) s"; ./hark bench whisper --backend cuda 2>&1; HARK_CUDA_PROFILE=1 ./hark bench whisper --backend cuda -r 2 2>&1
  for f in q8_0 q4_0; do echo "== 1B $f at $(el) s"; ./hark bench llm --backend cuda --model $B-$f.gguf -r 3 --pp 512 --tg 128 2>&1; done
  echo "== 1B q8_0 depth 4096 at $(el) s"; ./hark bench llm --backend cuda --model $B-q8_0.gguf -r 3 --pp 512 --tg 128 --depth 4096 2>&1
  echo "== 1B q8_0 depth 4096 profile at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $B-q8_0.gguf -r 1 --pp 512 --tg 128 --depth 4096 2>&1
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
wait
if [ -f kernels.ptx ] && [ $(el) -lt 330 ]; then
  HARK_CUDA_GRAPHS=0 timeout $((450 - $(el))) ncu --clock-control none -k regex:'rms_norm_mat_vec_q8_0|silu_mul_mat_vec_q8_0|attention_f16|attention_merge' -c 10 --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section WarpStateStats \
    ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 40 > $OUT/ncu.log 2>&1
  grep -A2 -E "entry function 'hark_(rms_norm_mat_vec_q8_0|silu_mul_mat_vec_q8_0|mat_vec_q8_0|attention_f16|attention_f32|attention_tiled_f32|attention_merge)'" $OUT/ptxas.txt
fi
cat $OUT/tests.log; grep -vE '^  (rope|embed|mat_vec|layer|gelu|add|mat_mul)' $OUT/timed.log | grep -vE '^(samples|load average)' | tail -150
echo "== end at $(el) s"
