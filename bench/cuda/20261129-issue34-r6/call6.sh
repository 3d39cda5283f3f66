#!/bin/bash
# GPU call 6 for issue 34 round 6 (bench/cuda/20261129-issue34-r6/): the repacked q8_0/q4_0 weights' loads issued
# before the activations' in the mat-vecs (mv_raw: 16 bytes of quants and a scale a chunk, dequantised once the
# activations are there), against call 4's tree (hark-d) in the same call. GPU tests, then tg128 of both.
# Run from a folder $K holding hark.xz, hark-d.xz, cuda.test.xz, msltest.test.xz, data.tar.xz.
set -u
K=${K:-.gpu/r6e}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared && cd /w
for b in hark hark-d cuda.test msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
( ./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8
  ./hark bench llm --backend cpu --shape llama-1b --dir /w/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 ) > $OUT/write.log 2>&1 &
W=$!
CH='RepackedWeights|MatVecAllTypes|FusedMatVecAllTypes|MatVecTuning|KernelsOtherTunings|E2EStories'
{ echo "== cuda.test at $(el) s"; timeout 120 ./cuda.test -test.run '^TestGPU(StoriesReplay|Errors)$' -test.v -test.count=1 2>&1 | grep -E '^(=== RUN|--- |ok|FAIL|PASS|panic)|Error|launches'; echo "exit ${PIPESTATUS[0]}"
  for mode in normal permuted poison; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261129";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== msltest $mode ($E) at $(el) s"; env $E HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.run "^Test($CH)\$" -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual'; echo "exit ${PIPESTATUS[0]}"
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
wait $W
M=/w/m/smollm2-135m-shape-v1-L30
B=/w/m/llama-1b-shape-v1-L16
{ for round in 1 2; do for f in q8_0 q4_0 f16; do for h in hark hark-d; do
    echo "== $f $h (round $round) at $(el) s"; ./$h bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 0 --tg 128 --chain 2>&1 | grep -E '^\| llama|^samples'
  done; done; done
  for f in q8_0 q4_0; do for h in hark hark-d; do
    echo "== 1B $f $h at $(el) s"; ./$h bench llm --backend cuda --model $B-$f.gguf -r 3 --pp 0 --tg 128 2>&1 | grep -E '^\| llama|^samples'
  done; done
  echo "== profile q8_0 at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -A9 'tg128 profile'
  echo "== timed done at $(el) s"; } > $OUT/timed.log 2>&1
cat $OUT/tests.log; grep -E '^==|tg128 \|' $OUT/timed.log | paste - - | awk -F'|' '{print $1, $8, $9}'; grep -A9 'tg128 profile' $OUT/timed.log
