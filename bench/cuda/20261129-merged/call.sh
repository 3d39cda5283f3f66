#!/bin/bash
# Lead's GPU check of the merged main (2026-11-29): the GPU tests after issue 33's sampler rework and issue 32's
# moves, the seeded tokens of CPU and CUDA, hark --version on an NVIDIA machine, decode speed greedy and sampled.
set -u
K=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
export PATH=$PATH:/usr/local/cuda/bin
for b in hark cuda.test msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
( ./hark bench llm --backend cpu --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 4; ls -la /w/m ) > $OUT/write.log 2>&1 &
W=$!
CH='Sample.*|MatVecAllTypes|FusedMatVecAllTypes|E2EStories|E2EWhisperJFK'
{ nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
  echo "== hark --version"; ./hark --version; ./hark version
  echo "== cuda.test ^TestGPU at $(el) s"; timeout 150 ./cuda.test -test.run '^TestGPU' -test.v -test.count=1 2>&1 | grep -E '^(=== RUN|\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual'; echo "exit ${PIPESTATUS[0]}"
  for mode in normal permuted poison; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261129";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== msltest $mode ($E) at $(el) s"; env $E HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.run "^Test($CH)\$" -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual'; echo "exit ${PIPESTATUS[0]}"
  done
  echo "== seeded generation, stories260K, CPU against CUDA at $(el) s"
  for be in cpu cuda; do ./hark generate --backend $be --model shared/models/stories260K.gguf --seed 7 --temp 0.8 --repeat-penalty 1.1 -n 96 --ignore-eos "Lily wanted to play" > gen-$be.txt 2>&1; echo "$be exit $?"; done
  cmp gen-cpu.txt gen-cuda.txt && echo "seeded generations equal"; cat gen-cuda.txt; echo
  echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
wait $W
M=/w/m/smollm2-135m-shape-v1-L30-q8_0.gguf
{ echo "== bench q8_0 at $(el) s"; ./hark bench llm --backend cuda --model $M -r 5 --pp 512 --tg 128 --chain 2>&1 | grep -vE '^  '
  echo "== generate sampled (temp 0.7) and greedy, wall seconds for -n 1 and -n 513 at $(el) s"
  for t in 0.7 0; do for n in 1 513; do s=$(date +%s.%N); ./hark generate --backend cuda --model $M --seed 1 --temp $t --ignore-eos -n $n "Once upon a time" > /dev/null 2>&1; e=$(date +%s.%N); echo "temp $t n $n: $(awk "BEGIN{print $e - $s}") s"; done; done
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
cat $OUT/tests.log $OUT/timed.log
echo "== end at $(el) s"
