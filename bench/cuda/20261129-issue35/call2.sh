#!/bin/bash
# GPU call 2 for issue 35: the cuda package's GPU tests after the moduleLoads fix (TestGPUSharedByTwoModels failed in
# call 1: two module loads, base + sm80), in normal, permuted-block and NaN-poisoned runs and without the native
# module; pp512 again (same binaries as call 1 but cuda.test).
set -u
K=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in hark cuda.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
( ./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 ) > /dev/null 2>&1 &
W=$!
{ for mode in normal permuted poison nonative; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261129";; poison) E="HARK_CUDA_POISON=1";; nonative) E="HARK_CUDA_NATIVE=0";; esac
    echo "== cuda.test ^TestGPU $mode ($E) at $(el) s"; env $E timeout 100 ./cuda.test -test.run '^TestGPU' -test.v -test.count=1 2>&1 | grep -E '^(=== RUN|\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|\.go:[0-9]+:'; echo "exit ${PIPESTATUS[0]}"
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
wait $W
M=/w/m/smollm2-135m-shape-v1-L30
{ for f in q8_0 q4_0 f16; do echo "== hark $f pp512 at $(el) s"; ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 512 --tg 0 2>&1; done
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
cat $OUT/tests.log; grep -E '^(==|\| llama)' $OUT/timed.log
