#!/bin/bash
# GPU call 1 for issue 34 round 8 (bench/cuda/20261130-decode-r8/): function constants stored only when their value
# changes (cuda/replay.go storeConstants) against every constant before every launch (HARK_CUDA_CONSTS=all, what main
# does), same binary, interleaved. GPU tests (cuda package: stories260K's golden tokens with graphs and chaining,
# graphs only, per dispatch; two models sharing the device with jfk's transcript), normal, permuted-block,
# NaN-poisoned; SmolLM2-shape tg128 (--pp 0), launches per token, profiles, the 1B shape, the kit Whisper decoder.
# Run from the repository root with $K holding hark.xz, cuda.test.xz, wq8.xz and data.tar.xz:
# K=.gpu/decode bash .gpu/decode/call1.sh
set -u
K=${K:-.gpu/decode}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in hark cuda.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
( ./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8
  ./hark bench llm --backend cpu --shape llama-1b --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8; ls -la /w/m ) > $OUT/write.log 2>&1 &
W=$!
{ nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem --format=csv,noheader
  for mode in normal permuted poison; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261130";; poison) E="HARK_CUDA_POISON=1";; esac
    G='^TestGPU(StoriesReplay|SharedByTwoModels)$'; [ $mode = normal ] && G='^TestGPU(Errors|StoriesReplay|SharedByTwoModels)$'
    echo "== cuda.test $mode ($E, -run $G) at $(el) s"
    env $E timeout 120 ./cuda.test -test.run "$G" -test.v -test.count=1 > $OUT/cuda-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|launches' $OUT/cuda-$mode.v.log | head -30
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
(cd $OUT && tar -czf cuda-logs.tgz cuda-*.v.log && rm cuda-*.v.log)
wait $W
M=/w/m/smollm2-135m-shape-v1-L30
B=/w/m/llama-1b-shape-v1-L16
row() { grep -E '^\| llama|^samples|host launches|GB/s'; }
{ for f in q8_0 q4_0 f16; do
    for rep in 1 2; do
      for c in all changed; do
        E=""; [ $c = all ] && E="HARK_CUDA_CONSTS=all"
        echo "== $f constants=$c (rep $rep) at $(el) s"; env $E ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 0 --tg 128 2>&1 | row
      done
    done
  done
  echo "== launches per token, q8_0, HARK_CUDA_GRAPHS=0 at $(el) s"
  HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1 | row
  for c in all changed; do
    E=""; [ $c = all ] && E="HARK_CUDA_CONSTS=all"
    echo "== profile q8_0 constants=$c at $(el) s"; env $E HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -A10 'tg128 profile'
  done
  for c in all changed; do
    E=""; [ $c = all ] && E="HARK_CUDA_CONSTS=all"
    echo "== 1B q8_0 constants=$c at $(el) s"; env $E ./hark bench llm --backend cuda --model $B-q8_0.gguf -r 3 --pp 0 --tg 128 2>&1 | row
  done
  for c in all changed; do
    E=""; [ $c = all ] && E="HARK_CUDA_CONSTS=all"
    echo "== whisper constants=$c at $(el) s"; env $E ./hark bench whisper --backend cuda -r 5 2>&1 | grep -E '^\| |^samples|cuda (encode|decode)'
  done
  echo "-- whisper decoder profile (constants=changed)"; HARK_CUDA_PROFILE=1 ./hark bench whisper --backend cuda -r 2 2>&1 | grep -A12 'decode profile'
  echo "== timed done at $(el) s"; } > $OUT/timed.log 2>&1
cat $OUT/tests.log $OUT/timed.log
echo "== end at $(el) s"
