#!/bin/bash
# Lead's check of the fourteenth session's merged main, second call (after callF1.sh on the same warm machine: the kit
# model and the data are in /w): msltest through CUDA (the sampler, attention with the ticket merge, the paged
# kernels, the Whisper window track, golden tokens, jfk greedy and beam 5 against the float-activation CPU), then
# timings: tg128 q8_0/q4_0/f16 and launches a token (#34), pp2048 as one batch with its footprint (#35), the Whisper
# decoder and greedy window (#34, #36), hark serve --batch-gpu at 1 and 16 streams (#38). $K holds msltest.test.xz,
# hark.xz, streamspeed.xz.
set -u
K=${K:-.gpu/finB}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
cd /w && [ -f shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin ] || { echo "no kit model left by callF1.sh"; exit 1; }
for b in msltest.test hark streamspeed; do xz -dc $K/$b.xz > $b && chmod +x $b; done
export HARK_TESTDATA=/w/shared
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
{ for mode in normal permuted poison; do
    E=$(modeenv $mode); CH='Sample.*|E2EStories|E2EWhisperJFK|WhisperTrack.*|WhisperFilter.*|AttentionMergeChunks|RopeAttentionKernel|AttentionKernel|AttentionPagedKernel|RopeKVPagedKernel|PagedKernelsBadRow'
    echo "== msltest $mode ($E) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda timeout 120 ./msltest.test -test.short -test.run "^Test($CH)\$" -test.skip '^TestSampleExpFixedPoint$' -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$mode.v.log | grep -v -- '--- PASS' | head -20
    echo "passed: $(grep -c -- '--- PASS' $OUT/msltest-$mode.v.log)"
  done; echo "== tests done at $(el) s"; } > $OUT/tests-msl.log 2>&1
TOK=/w/shared/llm-kit/tokenizers/smollm2; M=/w/m/smollm2-135m-shape-v1-L30
./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > $OUT/write.log 2>&1
{ for f in q8_0 q4_0 f16; do echo "== $f at $(el) s"; ./hark bench llm --backend cuda --model $M-$f.gguf -r 3 --pp 512 --tg 128 2>&1 | grep -vE '^  '; done
  echo "== launches a token, graphs off (q8_0) at $(el) s"; HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -E 'cuda tg128'
  echo "== pp2048 q8_0, one batch at $(el) s"; ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 2 --pp 2048 --tg 0 2>&1 | grep -vE '^  '
  echo "== whisper at $(el) s"; ./hark bench whisper --backend cuda -r 5 2>&1 | grep -vE '^  '
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
ln -sf $M-q8_0.gguf /w/models/smollm2-shape-q8_0.gguf 2>/dev/null || { mkdir -p /w/models && ln -sf $M-q8_0.gguf /w/models/smollm2-shape-q8_0.gguf; }
{ echo "== hark serve --backend cuda --batch-gpu; hark bench serve --concurrency 1,16,1,16 at $(el) s"
  ./hark serve --models-dir /w/models --backend cuda --batch-gpu --timeout 5m --addr 127.0.0.1:18090 > $OUT/serve-batch.log 2>&1 &
  P=$!
  for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/18090) 2>/dev/null && break; sleep 0.2; done
  timeout 100 ./hark bench serve --url http://127.0.0.1:18090 --model smollm2-shape-q8_0 --concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 2>&1
  kill $P; wait $P
  echo "== done at $(el) s"; } > $OUT/batch-cuda.log 2>&1
(cd $OUT && tar -czf test-logs.tgz *.v.log && rm *.v.log)
cat $OUT/tests-msl.log; grep -vE '^(samples|load average)' $OUT/timed.log; cat $OUT/batch-cuda.log
