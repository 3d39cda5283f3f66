#!/bin/bash
# GPU call 2 for issue 34 round 9 (bench/cuda/20261130-decode9/): call 1's fused forms were slower than the launches
# they saved (gelu_mat_vec 24.8 µs a launch: 48 double-precision exps a lane in every SIMD-group; layer_norm_mat_vec
# 13.8: two passes over x in every SIMD-group, the logits' 25,932 among them). Now GELU takes the GPU's exp, the
# LayerNorm statistics one shifted pass, and the logits keep their own LayerNorm. msltest on the GPU (the fused
# mat-vecs, repacked and aligned forms, jfk, stories260K's golden tokens) normal first, then the timings alone (the
# kit Whisper decoder twice, four attention split geometries by HARK_CUDA_TUNE, its profile; SmolLM2-shape tg128),
# then the permuted-block and NaN-poisoned runs. Run from the repository root with $K holding hark.xz,
# msltest.test.xz, wq8.xz and data.tar.xz: K=.gpu/decode9 bash .gpu/decode9/call2.sh
set -u
K=${K:-.gpu/decode9}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in hark msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
( ./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 6; ls -la /w/m ) > $OUT/write.log 2>&1 &
W=$!
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
tests() { # $1: mode
  local E; E=$(modeenv $1)
  CH='FusedMatVecAllTypes|E2EWhisperJFK|E2EStories'; [ $1 = normal ] && CH="$CH|RepackedWeights|Aligned16Loads"
  echo "== msltest $1 ($E) at $(el) s"
  env $E HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.run "^Test($CH)\$" -test.v -test.count=1 > $OUT/msltest-$1.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$1.v.log | grep -v -- '--- PASS' | head -30
  grep -c -- '--- PASS' $OUT/msltest-$1.v.log; grep -E 'layer_norm_mat_vec|gelu_mat_vec' $OUT/msltest-$1.v.log | head -80
}
{ nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem --format=csv,noheader; tests normal; } > $OUT/tests.log 2>&1
wait $W
M=/w/m/smollm2-135m-shape-v1-L30
row() { grep -E '^\| |host launches|cuda (encode|decode|tg)'; }
{ for rep in 1 2; do
    echo "== whisper (rep $rep) at $(el) s"; ./hark bench whisper --backend cuda -r 5 2>&1 | row
  done
  for tu in AttnChunk=64 AttnChunk=128 AttnMaxChunks=16 AttnMaxChunks=8; do
    echo "== whisper HARK_CUDA_TUNE=$tu at $(el) s"; HARK_CUDA_TUNE=$tu ./hark bench whisper --backend cuda -r 5 2>&1 | grep -E 'decode \(per'
  done
  echo "== whisper decoder profile at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench whisper --backend cuda -r 2 2>&1 | grep -A16 'decode profile'
  for f in q8_0 q4_0 f16; do
    echo "== $f tg128 at $(el) s"; ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 0 --tg 128 2>&1 | row
  done
  echo "== timed done at $(el) s"; } > $OUT/timed.log 2>&1
{ tests permuted; tests poison; echo "== end at $(el) s"; } >> $OUT/tests.log 2>&1
(cd $OUT && tar -czf test-logs.tgz *.v.log && rm *.v.log)
grep -vE 'layer_norm_mat_vec|gelu_mat_vec' $OUT/tests.log; cat $OUT/timed.log; grep -E 'layer_norm_mat_vec|gelu_mat_vec' $OUT/tests.log | head -60
