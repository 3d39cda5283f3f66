#!/bin/bash
# Lead's second GPU call on the merged tree (2026-11-29, fourth session): msltest's kernels with the native module
# off again (after TestMatMulTensorCores took the device's own tuning), then the merged tree's speed: issue 35's
# tensor-core prefill together with issue 34's round 4 and issue 33's sampler. Folder: hark.xz, msltest.test.xz,
# data.tar.xz, wq8.xz (as call.sh).
set -u
K=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in hark msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
( ./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8; ls -la /w/m ) > $OUT/write.log 2>&1 &
W=$!
CH='MatMulAllTypes|MatMulTensorCores|E2EStories|E2EWhisperJFK'
{ for mode in nonative normal; do
    case $mode in nonative) E="HARK_CUDA_NATIVE=0";; normal) E="";; esac
    echo "== msltest $mode ($E) at $(el) s"; env $E HARK_MSLTEST_DEVICE=cuda timeout 100 ./msltest.test -test.run "^Test($CH)\$" -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|tensor-core' $OUT/msltest-$mode.v.log
  done; } > $OUT/tests.log 2>&1
wait $W
M=/w/m/smollm2-135m-shape-v1-L30
{ for f in q8_0 q4_0 f16; do echo "== hark $f at $(el) s"; ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 512 --tg 128 --chain 2>&1; done
  echo "== q8_0 native off at $(el) s"; HARK_CUDA_NATIVE=0 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 3 --pp 512 --tg 128 2>&1 | grep -E '^\| llama'
  echo "== whisper at $(el) s"; ./hark bench whisper --backend cuda -r 5 2>&1
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
cat $OUT/tests.log $OUT/timed.log
