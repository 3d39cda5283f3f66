#!/bin/bash
# GPU call 4 for issue 34 round 6 (bench/cuda/20261129-issue34-r6/): the decode attention entries compiled for at
# most 512 threads (128 registers: at 64 they spilled ~250 bytes a thread), on top of call 3's kernels. GPU tests
# (cuda package; msltest's attention and end-to-end tests, jfk included, normal, permuted-block, NaN-poisoned),
# SmolLM2-shape tg128, the kit Whisper model (encoder, decoder, profile), the 1B shape at depth 4096 with profile.
# Run from a folder $K holding hark.xz, cuda.test.xz, msltest.test.xz, data.tar.xz, wq8.xz: OUT=$OUT K=.gpu/r6 bash call4.sh
set -u
K=${K:-.gpu/r6}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in hark msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
( ./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8
  ./hark bench llm --backend cpu --shape llama-1b --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8; ls -la /w/m ) > $OUT/write.log 2>&1 &
W=$!
CH='AttentionKernel|AttentionPagedKernel|KernelsOtherTunings|E2EStories|E2EWhisperJFK|MatVecAllTypes'
{ echo "== (cuda.test not carried: the 64 MiB limit)"
  for mode in normal permuted poison; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261129";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== msltest $mode ($E) at $(el) s"; env $E HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.run "^Test($CH)\$" -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual'; echo "exit ${PIPESTATUS[0]}"
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
{ echo "== whisper at $(el) s"; ./hark bench whisper --backend cuda -r 5 2>&1 | grep -E '^\| |^samples|cuda (encode|decode)'
  echo "-- HARK_CUDA_TUNE=AttnGroupKeys=1"; HARK_CUDA_TUNE=AttnGroupKeys=1 ./hark bench whisper --backend cuda -r 5 2>&1 | grep -E '^\| ggml|^samples'
  echo "-- profile"; HARK_CUDA_PROFILE=1 ./hark bench whisper --backend cuda -r 2 2>&1 | grep -A12 'decode profile'
  echo "== whisper done at $(el) s"; } > $OUT/whisper.log 2>&1
wait $W
M=/w/m/smollm2-135m-shape-v1-L30
B=/w/m/llama-1b-shape-v1-L16
{ for f in q8_0 q4_0 f16; do
    echo "== $f at $(el) s"; ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 512 --tg 128 --chain 2>&1 | grep -E '^\| (model|llama)|copy|^samples'
  done
  echo "== profile q8_0 at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -A9 'tg128 profile'
  echo "== 1B q8_0 tg128 and --depth 4096 at $(el) s"
  ./hark bench llm --backend cuda --model $B-q8_0.gguf -r 3 --pp 0 --tg 128 2>&1 | grep -E '^\| llama|^samples'
  ./hark bench llm --backend cuda --model $B-q8_0.gguf -r 3 --pp 0 --tg 64 --depth 4096 2>&1 | grep -E '^\| llama|^samples'
  HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $B-q8_0.gguf -r 1 --pp 0 --tg 16 --depth 4096 2>&1 | grep -A9 'profile'
  echo "== timed done at $(el) s"; } > $OUT/timed.log 2>&1
cat $OUT/tests.log $OUT/whisper.log $OUT/timed.log
echo "== end at $(el) s"
