#!/bin/bash
# GPU calls 1 and 2 for issue 34 round 6 (bench/cuda/20261129-issue34-r6/): decode kernels whose loads go out together
# (mat-vec: the activation chunk and its gate/up or norm weights loaded before any is used, weight rows by pairs
# with no branch between their loads; attention: the key dot 16 dims a step, the values 8 keys a step with NS dims
# per lane). The same arithmetic in the same order, so every result is unchanged. First the GPU tests (cuda
# package; msltest's kernel and end-to-end tests in normal, permuted-block and NaN-poisoned runs), then tg128 of
# this tree (hark) against main's (hark-before) in the same call, launches and profiles, issue 33's serve
# comparison (as bench/serve/20261129-s6-cuda), and the 1B shape (with --depth 4096).
# Run from a folder $K holding hark.xz, hark-before.xz, streamspeed.xz, cuda.test.xz, msltest.test.xz and
# data.tar.xz (README.md says how they were made): OUT=$OUT K=.gpu/r6 bash call.sh
set -u
K=${K:-.gpu/r6}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/models && cd /w
for b in hark hark-before streamspeed cuda.test msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
( ./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8
  ./hark bench llm --backend cpu --shape llama-1b --dir /w/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8; ls -la /w/m ) > $OUT/write.log 2>&1 &
W=$!
CH='RepackedWeights|MatVecAllTypes|FusedMatVecAllTypes|MatVecTuning|AttentionKernel|AttentionPagedKernel|KernelsOtherTunings|E2EStories'
{ nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.sm,clocks.mem --format=csv
  echo "== cuda.test ^TestGPU at $(el) s"; timeout 120 ./cuda.test -test.run '^TestGPU' -test.v -test.count=1 2>&1 | grep -E '^(=== RUN|--- |ok|FAIL|PASS|panic)|GB/s|Error|launches'; echo "exit ${PIPESTATUS[0]}"
  for mode in normal permuted poison; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261129";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== msltest $mode ($E) at $(el) s"; env $E HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.run "^Test($CH)\$" -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual'; echo "exit ${PIPESTATUS[0]}"
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
{ P=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
  for v in b c; do
    [ -f $K/kernels-$v.ptx.xz ] || continue
    xz -dc $K/kernels-$v.ptx.xz > /w/k-$v.ptx
    echo "== ptxas -v, variant $v"
    $P -arch=sm_90 -v -e hark_rms_norm_mat_vec_q8_0_rp,hark_silu_mul_mat_vec_q8_0_rp,hark_mat_vec_q8_0_rp,hark_rms_norm_mat_vec_f16,hark_silu_mul_mat_vec_f16,hark_attention_group_f16,hark_attention_f16,hark_attention_merge -o /dev/null /w/k-$v.ptx 2>&1 | grep -E "Compiling|registers|spill|stack|rror"
  done; } > $OUT/ptxas.log 2>&1
wait $W
M=/w/m/smollm2-135m-shape-v1-L30
B=/w/m/llama-1b-shape-v1-L16
{ for f in q8_0 q4_0 f16; do
    echo "== $f: this tree at $(el) s"; ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 512 --tg 128 --chain 2>&1 | grep -E '^\| (model|llama)|copy|^samples'
    echo "== $f: main (hark-before) at $(el) s"; ./hark-before bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 512 --tg 128 --chain 2>&1 | grep -E '^\| llama|^samples'
  done
  echo "== launches, HARK_CUDA_GRAPHS=0 at $(el) s"; HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -E 'cuda tg128|^\| llama'
  echo "== profile q8_0, this tree at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -A12 'tg128 profile'
  echo "== profile q8_0, main at $(el) s"; HARK_CUDA_PROFILE=1 ./hark-before bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -A12 'tg128 profile'
  echo "== profile f16, this tree at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $M-f16.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -A12 'tg128 profile'
  echo "== timed done at $(el) s"; } > $OUT/timed.log 2>&1
cat $OUT/tests.log $OUT/ptxas.log $OUT/timed.log
F=$M-q8_0.gguf
BS="./hark bench llm --backend cuda --model $F --tokenizer $TOK --pp 0 --tg 128 --chain"
{ echo "== A: $BS -r 5 --ctx 4096 (greedy) at $(el) s"; $BS -r 5 --ctx 4096 2>&1 | grep -E '^\| llama|^samples'
  echo "== C: --temp 0.7 --ctx 4096 at $(el) s"; $BS -r 5 --temp 0.7 --ctx 4096 2>&1 | grep -E '^\| llama|^samples'
  echo "== E: --temp 0.7 --ctx 4096 --depth 35 at $(el) s"; $BS -r 5 --temp 0.7 --ctx 4096 --depth 35 2>&1 | grep -E '^\| llama|^samples'
  ln -sf $F /w/models/smollm2-shape-q8_0.gguf
  echo "== hark serve --backend cuda, streamed chat (streamspeed) at $(el) s"
  ./hark serve --models-dir /w/models --backend cuda --addr 127.0.0.1:18089 > $OUT/serve.log 2>&1 &
  P=$!
  for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/18089) 2>/dev/null && break; sleep 0.2; done
  ./streamspeed -url http://127.0.0.1:18089 -model smollm2-shape-q8_0 -reps 6 -n 128
  kill $P; wait $P
  echo "== serve done at $(el) s"; } > $OUT/serve-cuda.log 2>&1
cat $OUT/serve-cuda.log
{ for f in q8_0 q4_0; do
    echo "== 1B $f this tree at $(el) s"; ./hark bench llm --backend cuda --model $B-$f.gguf -r 3 --pp 512 --tg 128 2>&1 | grep -E '^\| llama|copy'
    echo "== 1B $f main at $(el) s"; ./hark-before bench llm --backend cuda --model $B-$f.gguf -r 3 --pp 512 --tg 128 2>&1 | grep -E '^\| llama|^samples'
  done
  echo "== 1B q8_0 --depth 4096, this tree / main at $(el) s"
  ./hark bench llm --backend cuda --model $B-q8_0.gguf -r 3 --pp 0 --tg 64 --depth 4096 2>&1 | grep -E '^\| llama|^samples'
  ./hark-before bench llm --backend cuda --model $B-q8_0.gguf -r 3 --pp 0 --tg 64 --depth 4096 2>&1 | grep -E '^\| llama|^samples'
  echo "== 1B q8_0 --depth 4096 profile, this tree at $(el) s"
  HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $B-q8_0.gguf -r 1 --pp 0 --tg 16 --depth 4096 2>&1 | grep -A10 'profile'
  echo "== 1B done at $(el) s"; } > $OUT/oneb.log 2>&1
cat $OUT/oneb.log
echo "== end at $(el) s"
