#!/bin/bash
# GPU call 1 for issue 34 round 9 (bench/cuda/20261130-decode9/): the Whisper decoder's LayerNorms folded into the
# products that follow them (LayerNormMatVec) and GELU into the down product (GELUMatVec) in the step and beams
# passes. Tests first (cuda package and msltest on the GPU at once, normal mode), then timings alone (the kit
# Whisper decoder twice and its profile; SmolLM2-shape tg128 q8_0/q4_0/f16 and launches per token; the 1B shape),
# then the permuted-block and NaN-poisoned test runs. Run from the repository root with $K holding hark.xz,
# cuda.test.xz, msltest.test.xz, wq8.xz and data.tar.xz: K=.gpu/decode9 bash .gpu/decode9/call1.sh
set -u
K=${K:-.gpu/decode9}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in hark cuda.test msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
( ./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 6
  ./hark bench llm --backend cpu --shape llama-1b --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 6; ls -la /w/m ) > $OUT/write.log 2>&1 &
W=$!
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
tests() { # $1: mode
  local E; E=$(modeenv $1)
  { G='^TestGPU(StoriesReplay|SharedByTwoModels)$'; [ $1 = normal ] && G='^TestGPU(Errors|StoriesReplay|SharedByTwoModels)$'
    echo "== cuda.test $1 ($E) at $(el) s"
    env $E timeout 150 ./cuda.test -test.run "$G" -test.v -test.count=1 > $OUT/cuda-$1.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/cuda-$1.v.log | head -20; } > $OUT/t-cuda-$1.log 2>&1 &
  local C=$!
  { CH='FusedMatVecAllTypes|E2EWhisperJFK|E2EStories'; [ $1 = normal ] && CH="$CH|MatVecAllTypes|RepackedWeights|Aligned16Loads"
    echo "== msltest $1 ($E) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda timeout 170 ./msltest.test -test.run "^Test($CH)\$" -test.v -test.count=1 > $OUT/msltest-$1.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$1.v.log | grep -v -- '--- PASS' | head -30
    grep -c -- '--- PASS' $OUT/msltest-$1.v.log; grep -E 'layer_norm_mat_vec|gelu_mat_vec' $OUT/msltest-$1.v.log | head -80; } > $OUT/t-msl-$1.log 2>&1
  wait $C
  cat $OUT/t-cuda-$1.log $OUT/t-msl-$1.log >> $OUT/tests.log; rm $OUT/t-cuda-$1.log $OUT/t-msl-$1.log
}
nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem --format=csv,noheader > $OUT/tests.log 2>&1
tests normal
wait $W
M=/w/m/smollm2-135m-shape-v1-L30
B=/w/m/llama-1b-shape-v1-L16
row() { grep -E '^\| |^samples|host launches|GB/s|cuda (encode|decode|tg)'; }
{ for rep in 1 2; do
    echo "== whisper (rep $rep) at $(el) s"; ./hark bench whisper --backend cuda -r 5 2>&1 | row
  done
  echo "== whisper decoder profile at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench whisper --backend cuda -r 2 2>&1 | grep -A16 'decode profile'
  for f in q8_0 q4_0 f16; do
    echo "== $f tg128 at $(el) s"; ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 0 --tg 128 2>&1 | row
  done
  echo "== q8_0 launches per token (graphs off) at $(el) s"; HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -E 'cuda tg128|tg128 \|'
  echo "== 1B q8_0 tg128 at $(el) s"; ./hark bench llm --backend cuda --model $B-q8_0.gguf -r 3 --pp 0 --tg 128 2>&1 | row
  echo "== 1B q8_0 profile at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $B-q8_0.gguf -r 1 --pp 0 --tg 64 2>&1 | tail -16
  echo "== 1B q8_0 depth 4096 profile at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $B-q8_0.gguf -r 1 --pp 0 --tg 16 --depth 4096 2>&1 | tail -16
  echo "== timed done at $(el) s"; } > $OUT/timed.log 2>&1
tests permuted
tests poison
echo "== end at $(el) s" >> $OUT/tests.log
(cd $OUT && tar -czf test-logs.tgz *.v.log && rm *.v.log)
cat $OUT/tests.log; grep -vE '^samples' $OUT/timed.log
