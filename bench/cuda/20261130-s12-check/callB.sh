#!/bin/bash
# Lead's check of the merged tree (2026-11-30, twelfth session), second call, made the first on a fresh machine:
# (1) cold start (issue #36): the first `hark transcribe --backend cuda jfk.wav` of the machine, model load included,
# with HARK_CUDA_STARTUP=1 (driver start, context, kernels reported apart; the driver JIT-compiles the PTX), then
# again (the driver's compute cache warm); (2) decode and prefill (issue #34: tg128 and pp512, SmolLM2 shape,
# q8_0/q4_0/f16; the Whisper kit's encoder and decoder); (3) issue #33's serve comparison (bench llm chained greedy /
# temperature 0.7 / at the chat prompt's depth, then streamed chat through hark serve, Go client); (4) issue #38:
# hark serve --batch-gpu against hark bench serve at 1, 4 and 16 concurrent streams (128 + 128 tokens,
# temperature 0.7). Run from the repository root with $K holding hark.xz, streamspeed.xz, wq8.xz and data.tar.xz.
set -u
K=${K:-.gpu/s12b}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models /w/models && cd /w
for b in hark streamspeed; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
W8=/w/shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
{ nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.sm,clocks.mem --format=csv; ./hark --version
  ls ~/.nv/ComputeCache 2>/dev/null | head -3; echo "(compute cache entries above: none means a fresh machine)"
  for i in 1 2; do echo "== transcribe $i at $(el) s"
    HARK_CUDA_STARTUP=1 /usr/bin/time -f "transcribe --backend cuda, run $i: %e s wall" ./hark transcribe --backend cuda --model $W8 /w/shared/audio/jfk.wav 2>&1
  done; } > $OUT/cold.log 2>&1
TOK=/w/shared/llm-kit/tokenizers/smollm2
( ./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8; ls -la /w/m ) > $OUT/write.log 2>&1
M=/w/m/smollm2-135m-shape-v1-L30
{ for f in q8_0 q4_0 f16; do
    echo "== $f at $(el) s"; ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 512 --tg 128 --chain 2>&1 | grep -vE '^  '
  done
  echo "== launches a token, graphs off (q8_0) at $(el) s"; HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -E 'cuda tg128|tg128'
  echo "== whisper at $(el) s"; ./hark bench whisper --backend cuda -r 5 2>&1 | grep -vE '^  '
  for d in 0 35; do echo "== q8_0 chained sampled profile, ctx 4096, depth $d at $(el) s"
    HARK_CUDA_PROFILE=1 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 --chain --temp 0.7 --ctx 4096 --depth $d 2>&1 | tail -24; done
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
F=$M-q8_0.gguf
B="./hark bench llm --backend cuda --model $F --pp 0 --tg 128 --chain"
ln -sf $F /w/models/smollm2-shape-q8_0.gguf
{ echo "== A: $B -r 5 --ctx 4096 (greedy) at $(el) s"; $B -r 5 --ctx 4096 2>&1 | grep -vE '^  '
  echo "== C: $B -r 5 --temp 0.7 --ctx 4096 at $(el) s"; $B -r 5 --temp 0.7 --ctx 4096 2>&1 | grep -vE '^  |tg128 \|'
  echo "== E: $B -r 5 --temp 0.7 --ctx 4096 --depth 35 at $(el) s"; $B -r 5 --temp 0.7 --ctx 4096 --depth 35 2>&1 | grep -vE '^  |tg128 \|'
  echo "== hark serve --backend cuda, streamed chat (bench/serve/streamspeed) at $(el) s"
  ./hark serve --models-dir /w/models --backend cuda --addr 127.0.0.1:18089 > $OUT/serve.log 2>&1 &
  P=$!
  for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/18089) 2>/dev/null && break; sleep 0.2; done
  ./streamspeed -url http://127.0.0.1:18089 -model smollm2-shape-q8_0 -reps 6 -n 128
  kill $P; wait $P
  echo "== done at $(el) s"; } > $OUT/serve-cuda.log 2>&1
{ echo "== hark serve --backend cuda --batch-gpu; hark bench serve --concurrency 1,4,16,1,4,16 at $(el) s"
  ./hark serve --models-dir /w/models --backend cuda --batch-gpu --timeout 5m --addr 127.0.0.1:18090 > $OUT/serve-batch.log 2>&1 &
  P=$!
  for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/18090) 2>/dev/null && break; sleep 0.2; done
  timeout 150 ./hark bench serve --url http://127.0.0.1:18090 --model smollm2-shape-q8_0 --concurrency 1,4,16,1,4,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 2>&1
  kill $P; wait $P
  echo "== done at $(el) s"; } > $OUT/batch-cuda.log 2>&1
cat $OUT/cold.log $OUT/write.log; grep -vE '^(samples|load average)' $OUT/timed.log; cat $OUT/serve-cuda.log $OUT/batch-cuda.log
