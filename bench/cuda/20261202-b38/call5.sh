#!/bin/bash
# Issue #38, session 26, helper b38, call 5 (a fresh machine): the branch's hark as it ships (the split off, no
# PromptBeside) served: the 4,000-token prompt beside 4 streams and --concurrency 1,16,1,16 (main's figures: call 4);
# then msltest's paged tests through CUDA in normal, HARK_CUDA_PERMUTE=20261201 and HARK_CUDA_POISON=1 runs. $K holds
# hark.xz, msltest.test.xz (the branch's, -tags hark_nocubin) and data.tar.xz. K=.gpu/b38/u bash .gpu/b38/u/call5.sh
set -u
K=${K:-.gpu/b38/u}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD; W=/w/b38
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v && cd $W
for b in hark msltest.test; do xz -T4 -dc $K/$b.xz > $b && chmod +x $b; done
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
[ -f $F ] || ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
mkdir -p models && ln -sf $F models/smollm2-shape-q8_0.gguf
serve() { # $1: port; bench flags in $BF
  echo "== hark serve --backend cuda --batch-gpu --ctx 8192 --stream-interval 0, bench serve $BF at $(el) s"
  ./hark serve --models-dir $W/models --backend cuda --batch-gpu --ctx 8192 --stream-interval 0 --timeout 5m --addr 127.0.0.1:$1 > $W/v/hserve-$1.log 2>&1 &
  local P=$!
  for i in $(seq 600); do (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null && break; sleep 0.2; done
  timeout 100 ./hark bench serve --url http://127.0.0.1:$1 --model smollm2-shape-q8_0 $BF 2>&1
  kill $P; wait $P; }
{ BF="--concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7" serve 18201
  BF="--concurrency 4,4 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 --long-prompt 4000 --long-after 16" serve 18202
  echo "== done at $(el) s"; } > $OUT/call5-serve.log 2>&1
cat $OUT/call5-serve.log
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261201";; poison) echo "HARK_CUDA_POISON=1";; esac; }
MR='TestAttentionPagedAligned|TestAttentionPagedKernel|TestRopeKVPagedKernel|TestPagedKernelsBadRow|TestAttentionPagedSplit|TestE2EBatchPagedSplit'
{ for mode in normal permuted poison; do
    E=$(modeenv $mode)
    echo "== msltest $mode ($E) through CUDA, the device's tuning: $MR at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 45 ./msltest.test -test.run "^($MR)\$" -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$mode.v.log | grep -v -- '--- PASS' | head -12
    echo "passed: $(grep -c -- '--- PASS' $OUT/msltest-$mode.v.log)"
  done; echo "== done at $(el) s"; } > $OUT/call5-tests.log 2>&1
(cd $OUT && tar -czf call5-logs.tgz *.v.log -C $W/v . && rm *.v.log)
cat $OUT/call5-tests.log
