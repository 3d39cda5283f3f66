#!/bin/bash
# GPU call 3 for issue 34 round 7 (bench/cuda/20261130-decode/): commit 4120cc9 (the mat-vecs' activations by 16-byte
# loads, function constant 22) against call 1's binary (1692b21, hark-before here) in the same call. GPU tests (cuda
# package: stories260K's golden tokens with graphs and chaining; msltest's mat-vec tests and TestE2EStories, normal,
# permuted-block, NaN-poisoned), then SmolLM2-shape tg128 (--pp 0) before/after interleaved, launches per token,
# profiles, the 1B shape. Run from the repository root with $K holding hark.xz, hark-before.xz (call 1's hark),
# cuda.test.xz, msltest.test.xz (both -ldflags='-s -w'), data.tar.xz: K=.gpu/decode3 bash .gpu/decode3/call3.sh
set -u
K=${K:-.gpu/decode}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared && cd /w
for b in hark hark-before cuda.test msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
( ./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8
  ./hark bench llm --backend cpu --shape llama-1b --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8; ls -la /w/m ) > $OUT/write.log 2>&1 &
W=$!
{ nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  for mode in normal permuted poison; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261130";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== cuda.test $mode ($E) at $(el) s"
    env $E timeout 100 ./cuda.test -test.run '^TestGPU(StoriesReplay|SharedByTwoModels)$' -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|launches'; echo "exit ${PIPESTATUS[0]}"
    CH='Aligned16Loads|E2EStories'
    [ $mode = normal ] && CH="$CH|RepackedWeights|MatVecAllTypes|FusedMatVecAllTypes|MatVecTuning|RopeAttentionKernel"
    echo "== msltest $mode ($E) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda timeout 200 ./msltest.test -test.run "^Test($CH)\$" -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|rope_attention:' $OUT/msltest-$mode.v.log | head -40
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
wait $W
M=/w/m/smollm2-135m-shape-v1-L30
B=/w/m/llama-1b-shape-v1-L16
row() { grep -E '^\| llama|^samples|host launches'; }
{ for f in q8_0 q4_0 f16; do
    for bin in hark-before hark; do
      echo "== $f $bin at $(el) s"; ./$bin bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 0 --tg 128 2>&1 | row
    done
  done
  echo "== q8_0 hark HARK_CUDA_TUNE=Align16=1 (no alignment promise: neither f16 rows nor activations) at $(el) s"
  HARK_CUDA_TUNE=Align16=1 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 5 --pp 0 --tg 128 2>&1 | row
  echo "== launches per token, q8_0, HARK_CUDA_GRAPHS=0, hark at $(el) s"
  HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1 | row
  for f in q8_0 q4_0 f16; do
    echo "== profile $f hark at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $M-$f.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -A10 'tg128 profile'
  done
  echo "== profile q4_0 hark-before at $(el) s"; HARK_CUDA_PROFILE=1 ./hark-before bench llm --backend cuda --model $M-q4_0.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -A10 'tg128 profile'
  for bin in hark-before hark; do
    echo "== 1B q8_0 $bin at $(el) s"; ./$bin bench llm --backend cuda --model $B-q8_0.gguf -r 3 --pp 0 --tg 128 2>&1 | row
  done
  echo "== timed done at $(el) s"; } > $OUT/timed.log 2>&1
(cd $OUT && tar -czf msltest-logs.tgz msltest-*.v.log && rm msltest-*.v.log)
cat $OUT/tests.log $OUT/timed.log
echo "== end at $(el) s"
