#!/bin/bash
# Final check, call 2 of 3 (g1's machine, its cubins in the checkout): the model's last part; the merged main's hark:
# jfk through CUDA, hark bench whisper (decoder step, greedy and beam 5) with the profile, the LLM rows (SmolLM2
# shape tg128 q8_0/q4_0/f16, launches a token), then hark serve --backend cuda --batch-gpu --ctx 8192 against hark
# bench serve: the 4,000-token prompt beside 4 streams, and 1 and 16 streams (issue #38). $K holds q8.xz.02, hark.xz
# (CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -tags hark_nocubin, with the checkout's cubins).
set -u
R=$(pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=${W:-/w/s18}
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT; [ -d $W/shared/llm-kit ] || { echo "not g1's machine"; exit 3; }
W=$W bash bench/cuda/20261201-s17/stage.sh > /dev/null
cd $W && cp -n q8.bin shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
W8=$W/q8.bin; JFK=$W/shared/audio/jfk.wav; TOK=$W/shared/llm-kit/tokenizers/smollm2
{ echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); q8.bin $(sha256sum q8.bin | cut -c1-16)"
  HARK_CUDA_STARTUP=1 HARK_TIMINGS=1 ./hark transcribe --backend cuda --model $W8 --beam 1 $JFK 2>&1 | tail -4
  ./hark transcribe --backend cuda --model $W8 --beam 5 $JFK 2>&1 | tail -2
  echo "== bench whisper, 2 rounds, at $(el) s"; for r in 1 2; do ./hark bench whisper --backend cuda -r 3 --beam 5 --model $W8 --audio $JFK 2>&1 | grep -vE '^samples'; done
  echo "== profile at $(el) s"; HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 ./hark bench whisper --backend cuda -r 1 --beam 1 --model $W8 --audio $JFK 2>&1 | grep -vE '^samples' | head -40
} > $OUT/g2-whisper.log 2>&1
{ echo "== LLM at $(el) s"; mkdir -p m
  ./hark bench llm --backend cpu --dir m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /dev/null 2>&1; ls m
  for f in q8_0 q4_0 f16; do ./hark bench llm --backend cuda --model m/smollm2-135m-shape-v1-L30-$f.gguf -r 3 --pp 512 --tg 128 2>&1 | grep -E '^\| .*(pp512|tg128)'; done
  echo "== launches a token, graphs off (q8_0)"; HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model m/smollm2-135m-shape-v1-L30-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -E 'cuda tg128'
  echo "== done at $(el) s"; } > $OUT/g2-llm.log 2>&1
mkdir -p models && ln -sf $W/m/smollm2-135m-shape-v1-L30-q8_0.gguf models/smollm2-shape-q8_0.gguf
serve() { # $1: port, $2...: serve flags; then bench flags in $BF
  ./hark serve --models-dir $W/models --backend cuda --batch-gpu --timeout 5m --addr 127.0.0.1:$1 "${@:2}" > $OUT/hserve-$1.log 2>&1 &
  P=$!
  for i in $(seq 300); do (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null && break; sleep 0.2; done
  timeout 90 ./hark bench serve --url http://127.0.0.1:$1 --model smollm2-shape-q8_0 $BF 2>&1
  kill $P; wait $P; }
LBF="--concurrency 4,4 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 --long-prompt 4000 --long-after 16"
{ echo "== long prompt beside 4 streams, split (default) at $(el) s"; BF=$LBF serve 18091 --ctx 8192
  echo "== --concurrency 1,16,1,16 at $(el) s"; BF="--concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7" serve 18092 --ctx 8192
  echo "== long prompt beside 4 streams, split off (HARK_CUDA_TUNE=AttnPagedChunk=4194304) at $(el) s"; HARK_CUDA_TUNE=AttnPagedChunk=4194304 BF=$LBF serve 18093 --ctx 8192
  echo "== long prompt beside 4 streams, split, values batched (HARK_CUDA_TUNE=AttnPagedValues=2) at $(el) s"; HARK_CUDA_TUNE=AttnPagedValues=2 BF=$LBF serve 18094 --ctx 8192
  echo "== done at $(el) s"; } > $OUT/g2-serve.log 2>&1
(cd $OUT && tar -czf g2-serve-logs.tgz hserve-*.log && rm hserve-*.log)
cat $OUT/g2-whisper.log $OUT/g2-llm.log $OUT/g2-serve.log
