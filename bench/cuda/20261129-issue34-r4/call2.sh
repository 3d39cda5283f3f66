#!/bin/bash
# Call 2 of issue 34 round 4: the split's second cap (AttnMaxChunks, 64 per (row, head) in the cuda family, with
# AttnSplitGroups 16): the msltest kernel tests (normal run), then SmolLM2 and 1B q8_0 at 4096 cached keys with the
# new family and AttnMaxChunks=32/128, SmolLM2 tg128, Whisper. Same folder layout as call.sh (no cuda.test.xz).
set -u
K=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in hark msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
( ./hark bench llm --backend cpu --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 4
  ./hark bench llm --backend cpu --shape llama-1b --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 4 ) > $OUT/write.log 2>&1 &
W=$!
CH='AttentionKernel|KernelsOtherTunings|E2EStories|E2EWhisperJFK'
{ for mode in normal poison; do
    case $mode in normal) E="";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== msltest $mode ($E) at $(el) s"; env $E HARK_MSLTEST_DEVICE=cuda timeout 100 ./msltest.test -test.run "^Test($CH)\$" -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual'; echo "exit ${PIPESTATUS[0]}"
  done; } > $OUT/tests.log 2>&1
wait $W
M=/w/m/smollm2-135m-shape-v1-L30
B=/w/m/llama-1b-shape-v1-L16
{ for v in "" AttnMaxChunks=32 AttnMaxChunks=128; do
    for m in $M $B; do echo "-- $(basename $m) q8_0 d4096 HARK_CUDA_TUNE=$v at $(el) s"; HARK_CUDA_TUNE=$v ./hark bench llm --backend cuda --model $m-q8_0.gguf -r 3 --pp 512 --tg 128 --depth 4096 2>&1 | grep -E '^\| llama'; done; done
  echo "== SmolLM2 q8_0 tg128 at $(el) s"; ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 5 --pp 0 --tg 128 2>&1 | grep -E '^\| llama'
  echo "== whisper at $(el) s"; ./hark bench whisper --backend cuda 2>&1
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
cat $OUT/tests.log $OUT/timed.log
