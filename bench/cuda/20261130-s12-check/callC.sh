#!/bin/bash
# Lead's last check of the twelfth session's main (after the batch engine's one-wait draws, SampleAll, and the
# second decode-attention round): the cuda package's GPU tests (the batch engine on CUDA among them) and msltest's
# attention, sampling and end-to-end tests in normal, permuted and poisoned runs; issue #33's serve comparison
# (A greedy chained, C temperature 0.7, E at depth 35, streamed chat); issue #38's hark serve --batch-gpu against
# hark bench serve at 1, 4 and 16 streams. Run from the repository root with $K holding hark.xz, streamspeed.xz,
# cuda.test.xz, msltest.test.xz and data.tar.xz (no Whisper model: JFK is not run here).
set -u
K=${K:-.gpu/s12c}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/models && cd /w
for b in hark streamspeed cuda.test msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
( ./hark bench llm --backend cpu --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 ) > $OUT/write.log 2>&1
F=/w/m/smollm2-135m-shape-v1-L30-q8_0.gguf; ln -sf $F /w/models/smollm2-shape-q8_0.gguf
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
{ for mode in normal permuted poison; do
    E=$(modeenv $mode)
    echo "== cuda.test $mode ($E) at $(el) s"
    env $E timeout 100 ./cuda.test -test.run '^TestGPU(StoriesReplay|BatchEqualsSequential|SharedByTwoModels)$' -test.v -test.count=1 > $OUT/cuda-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|peak' $OUT/cuda-$mode.v.log | head -20
    echo "== msltest $mode at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda timeout 100 ./msltest.test -test.short -test.run '^Test(Sample.*|E2EStories|AttentionMergeChunks|RopeAttentionKernel|AttentionKernel|RopeKVPagedKernel|AttentionPagedKernel)$' -test.skip '^TestSampleExpFixedPoint$' -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$mode.v.log | grep -v -- '--- PASS' | head -20
    grep -c -- '--- PASS' $OUT/msltest-$mode.v.log
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
B="./hark bench llm --backend cuda --model $F --pp 0 --tg 128 --chain"
{ echo "== A: $B -r 5 --ctx 4096 (greedy) at $(el) s"; $B -r 5 --ctx 4096 2>&1 | grep -E 'samples|chained \|'
  echo "== C: $B -r 5 --temp 0.7 --ctx 4096 at $(el) s"; $B -r 5 --temp 0.7 --ctx 4096 2>&1 | grep -E 'samples.*chained|chained temp'
  echo "== E: $B -r 5 --temp 0.7 --ctx 4096 --depth 35 at $(el) s"; $B -r 5 --temp 0.7 --ctx 4096 --depth 35 2>&1 | grep -E 'samples.*chained|chained temp'
  echo "== streamed chat at $(el) s"
  ./hark serve --models-dir /w/models --backend cuda --addr 127.0.0.1:18089 > $OUT/serve.log 2>&1 &
  P=$!
  for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/18089) 2>/dev/null && break; sleep 0.2; done
  ./streamspeed -url http://127.0.0.1:18089 -model smollm2-shape-q8_0 -reps 6 -n 128
  kill $P; wait $P
  echo "== hark serve --backend cuda --batch-gpu; hark bench serve --concurrency 1,4,16,1,4,16 at $(el) s"
  ./hark serve --models-dir /w/models --backend cuda --batch-gpu --timeout 5m --addr 127.0.0.1:18090 > $OUT/serve-batch.log 2>&1 &
  P=$!
  for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/18090) 2>/dev/null && break; sleep 0.2; done
  timeout 100 ./hark bench serve --url http://127.0.0.1:18090 --model smollm2-shape-q8_0 --concurrency 1,4,16,1,4,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 2>&1
  kill $P; wait $P
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
cat $OUT/tests.log $OUT/timed.log
(cd $OUT && tar -czf test-logs.tgz *.v.log && rm *.v.log)
