#!/bin/bash
# Twentieth session's GPU call 2 of 2 (f1's warm machine: its PDL cubins in $W/cubin, its binaries and data): the kit
# model's last parts, TestE2EWhisperJFK through CUDA (greedy and beam 5) in the three modes with PDL on, and
# TestGPUSharedByTwoModels, then the figures with PDL on and off, alternated in each round (off: HARK_CUDA_PDL=0, the
# same cubins, whose wait then returns at once; the first two runs of this script, v0/ and wait-only/, also had main:
# the checked-in cubins made before PDL): the Whisper decoder step (issue #34, hark bench whisper), SmolLM2's tg128
# q8_0 / q4_0 / f16 and the 1B shape's q8_0 / q4_0 (issue #34), BenchmarkGPUBatchStep at 1 and 16 rows and 16 streams
# through hark serve --batch-gpu (issue #38). $K holds hark.xz and q8.xz.01 (q8.xz.02 came in a call of its own
# before, `K=.gpu/s20c W=/w/s20 bash bench/cuda/20261201-s17/stage.sh`: the three parts with the checkout passed 64 MiB).
set -u
R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/s20}; S=$(date +%s); mkdir -p $OUT
el() { echo $(( $(date +%s) - S )); }
[ -d $W/cubin ] && [ -x $W/msltest.test ] || { echo "not f1's machine"; exit 3; }
W=$W bash bench/cuda/20261201-s17/stage.sh > /dev/null
cd $W && cp -n q8.bin shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$W/cubin
TOK=$W/shared/llm-kit/tokenizers/smollm2; mkdir -p m models
( ./hark bench llm --backend cpu --dir m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /dev/null 2>&1
  ./hark bench llm --backend cpu --shape llama-1b --dir m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /dev/null 2>&1 ) &
PW=$!
{ for m in normal permuted poison; do
    case $m in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 150 ./msltest.test -test.run '^TestE2EWhisperJFK$' -test.v -test.count=1 > v/jfk-$m.v.log 2>&1
    echo "-- jfk $m ($E): exit $?, $(grep -E '^(ok|PASS|FAIL)' v/jfk-$m.v.log | tail -1)"; grep -E 'beams [15]: msltest on cuda' v/jfk-$m.v.log | cut -c1-160
  done
  timeout 100 ./cuda.test -test.run '^TestGPUSharedByTwoModels$' -test.v -test.count=1 > v/shared.v.log 2>&1
  echo "-- TestGPUSharedByTwoModels: exit $?, $(grep -E '^(ok|PASS|FAIL)' v/shared.v.log | tail -1)"
  echo "== tests done at $(el) s"; } > $OUT/f2-tests.log 2>&1
wait $PW
# on: PDL cubins, PDL launches; off: the same cubins, plain launches; main: the checked-in cubins (no wait)
v() { case $1 in on) echo "HARK_CUDA_CUBIN_DIR=$W/cubin";; off) echo "HARK_CUDA_CUBIN_DIR=$W/cubin HARK_CUDA_PDL=0";; main) echo "HARK_CUDA_CUBIN_DIR=$R/cuda/cubin";; esac; }
JFK=$W/shared/audio/jfk.wav; B="bench whisper --backend cuda --model q8.bin --audio $JFK --tokens 64 -r 3"
F=m/smollm2-135m-shape-v1-L30; ln -sf $W/$F-q8_0.gguf models/smollm2-shape-q8_0.gguf
{ for r in 1 2 3 4; do [ -n "${F2SHORT:-}" ] && [ $r -gt 2 ] && break; for x in on off; do echo "== whisper round $r $x at $(el) s"; env $(v $x) ./hark $B 2>&1 | grep -E 'decode \(|encode \('; done; done
  if [ -n "${F2SHORT:-}" ]; then # F2SHORT=1: the tests, two Whisper rounds and one tg128 of each file, PDL on
    for f in $F-q8_0 $F-q4_0 m/llama-1b-shape-v1-L16-q8_0 m/llama-1b-shape-v1-L16-q4_0; do echo "== $f on at $(el) s"
      ./hark bench llm --backend cuda --model $f.gguf -r 3 --pp 0 --tg 128 2>&1 | grep -E '^\| .*tg128'; done
  else
  for r in 1 2; do for x in on off; do
    for t in q8_0 q4_0 f16; do echo "== SmolLM2 $t $x round $r at $(el) s"; env $(v $x) ./hark bench llm --backend cuda --model $F-$t.gguf -r 3 --pp 0 --tg 128 2>&1 | grep -E '^\| .*tg128'; done
    for t in q8_0 q4_0; do echo "== 1B $t $x round $r at $(el) s"; env $(v $x) ./hark bench llm --backend cuda --model m/llama-1b-shape-v1-L16-$t.gguf -r 3 --pp 0 --tg 128 2>&1 | grep -E 'tg128|GB/s'; done
  done; done
  for x in on off; do echo "== BenchmarkGPUBatchStep $x at $(el) s"
    env $(v $x) HARK_BENCH_MATMUL_ROWS=17 HARK_BENCH_MODEL=$W/$F-q8_0.gguf timeout 60 ./cuda.test -test.run '^$' -test.bench 'GPUBatchStep/rows=(1|16)$' -test.benchtime 256x 2>&1 | grep -E 'ms/step|FAIL|panic'; done
  for x in on off; do echo "== hark serve --batch-gpu, 16 streams, $x at $(el) s"
    env $(v $x) ./hark serve --models-dir $W/models --backend cuda --batch-gpu --ctx 8192 --timeout 5m --addr 127.0.0.1:18131 > v/serve-$x.log 2>&1 &
    SP=$!; for i in $(seq 300); do (echo > /dev/tcp/127.0.0.1/18131) 2>/dev/null && break; sleep 0.2; done
    timeout 90 ./hark bench serve --url http://127.0.0.1:18131 --model smollm2-shape-q8_0 --concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 2>&1
    kill $SP; wait $SP; done
  echo "== launches a token, graphs off (PDL on) at $(el) s"; HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $F-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -E 'launch|cuda tg'
  fi
  echo "== done at $(el) s"; } > $OUT/f2-bench.log 2>&1
(cd v && tar -czf $OUT/f2-test-logs.tgz jfk-*.v.log shared.v.log serve-*.log)
cat $OUT/f2-tests.log $OUT/f2-bench.log
