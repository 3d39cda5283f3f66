#!/bin/bash
# Nineteenth session's GPU check, call 2 of 2 (f1's warm machine: its cubins in $W/cubin, its binaries and data):
# the kit model's last parts, then TestE2EWhisperJFK through CUDA (greedy and beam 5, the three modes), and the
# merged main's figures: the Whisper decoder step (issue #34, hark bench whisper, 3 rounds), SmolLM2 and the 1B
# shape's tg128 q8_0 / q4_0 (issue #34), BenchmarkGPUBatchStep at 1 and 16 rows and 16 streams through hark serve
# --batch-gpu (issue #38). $K holds q8.xz.01, q8.xz.02, hark.xz.
set -u
R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/s19}; S=$(date +%s); mkdir -p $OUT
el() { echo $(( $(date +%s) - S )); }
[ -d $W/cubin ] && [ -x $W/msltest.test ] || { echo "not f1's machine"; exit 3; }
W=$W bash bench/cuda/20261201-s17/stage.sh > /dev/null
cd $W && cp -n q8.bin shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$W/cubin
TOK=$W/shared/llm-kit/tokenizers/smollm2; mkdir -p m models
( ./hark bench llm --backend cpu --dir m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /dev/null 2>&1
  ./hark bench llm --backend cpu --shape llama-1b --dir m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /dev/null 2>&1 ) &
PW=$!
{ for m in normal permuted poison; do
    case $m in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 150 ./msltest.test -test.run '^TestE2EWhisperJFK$' -test.v -test.count=1 > v/jfk-$m.v.log 2>&1
    echo "-- jfk $m ($E): exit $?, $(grep -E '^(ok|PASS|FAIL)' v/jfk-$m.v.log | tail -1)"; grep -E 'beams [15]: msltest on cuda' v/jfk-$m.v.log | cut -c1-160
  done; echo "== tests done at $(el) s"; } > $OUT/f2-tests.log 2>&1
wait $PW
JFK=$W/shared/audio/jfk.wav; B="bench whisper --backend cuda --model q8.bin --audio $JFK --tokens 64 -r 3"
F=m/smollm2-135m-shape-v1-L30-q8_0.gguf; ln -sf $W/$F models/smollm2-shape-q8_0.gguf
{ for r in 1 2 3; do echo "== whisper round $r at $(el) s"; ./hark $B 2>&1 | grep -E 'decode \(|encode \('; done
  echo "== SmolLM2 q8_0 at $(el) s"; ./hark bench llm --backend cuda --model $F -r 3 --pp 0 --tg 128 2>&1 | grep -E '^\| .*tg128'
  for t in q8_0 q4_0; do echo "== 1B $t at $(el) s"; ./hark bench llm --backend cuda --model m/llama-1b-shape-v1-L16-$t.gguf -r 3 --pp 0 --tg 128 2>&1 | grep -E 'tg128|GB/s'; done
  echo "== BenchmarkGPUBatchStep at $(el) s"
  HARK_BENCH_MATMUL_ROWS=17 HARK_BENCH_MODEL=$W/$F timeout 60 ./cuda.test -test.run '^$' -test.bench 'GPUBatchStep/rows=(1|16)$' -test.benchtime 256x 2>&1 | grep -E 'ms/step|FAIL|panic'
  echo "== hark serve --batch-gpu, 16 streams at $(el) s"
  ./hark serve --models-dir $W/models --backend cuda --batch-gpu --ctx 8192 --timeout 5m --addr 127.0.0.1:18131 > v/serve.log 2>&1 &
  SP=$!; for i in $(seq 300); do (echo > /dev/tcp/127.0.0.1/18131) 2>/dev/null && break; sleep 0.2; done
  timeout 90 ./hark bench serve --url http://127.0.0.1:18131 --model smollm2-shape-q8_0 --concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 2>&1
  kill $SP; wait $SP; echo "== done at $(el) s"; } > $OUT/f2-bench.log 2>&1
(cd v && tar -czf $OUT/f2-test-logs.tgz jfk-*.v.log serve.log)
cat $OUT/f2-tests.log $OUT/f2-bench.log
