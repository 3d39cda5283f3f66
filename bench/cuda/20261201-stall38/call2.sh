#!/bin/bash
# Issue #38 on the H200 (2026-12-01, eighteenth session, branch stall38), second call on call1's warm machine:
# msltest through CUDA (this branch's msltest.test, the device's tuning) for the paged kernels in normal,
# permuted-block and NaN-poisoned runs, then main's hark (78e82cd, hark0) serving the same load as call1:
# --ctx 8192, --concurrency 4,4 --long-prompt 4000 --long-after 16, and --concurrency 1,16,1,16. $K holds
# msltest.test.xz, hark0.xz and data.tar.xz; the model file is call1's (/w/m), or written again.
set -u
K=${K:-.gpu/stall38b}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/models /w/m && cd /w
for b in msltest.test hark0; do xz -T4 -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
F=/w/m/smollm2-135m-shape-v1-L30-q8_0.gguf
[ -f $F ] || ./hark0 bench llm --backend cpu --dir /w/m --type q8_0 --tokenizer /w/shared/llm-kit/tokenizers/smollm2 --pp 8 --tg 0 -r 1 -t 8 > $OUT/write.log 2>&1
ln -sf $F /w/models/smollm2-shape-q8_0.gguf
MR='AttentionPagedRowsKernel|AttentionPagedKernel|PagedKernelsBadRow|RopeKVPagedKernel|E2EStories'
for mode in normal permuted poison; do
  case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
  echo "== msltest $mode ($E), device tuning, at $(el) s"
  env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 100 ./msltest.test -test.run "^Test($MR)\$" -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|worst' $OUT/msltest-$mode.v.log | head -20
done > $OUT/tests.log 2>&1
serve() { # $1: port, $2...: serve flags; then bench flags in $BF
  ./hark0 serve --models-dir /w/models --backend cuda --batch-gpu --timeout 5m --addr 127.0.0.1:$1 "${@:2}" > $OUT/hserve-$1.log 2>&1 &
  P=$!
  for i in $(seq 300); do (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null && break; sleep 0.2; done
  timeout 60 ./hark0 bench serve --url http://127.0.0.1:$1 --model smollm2-shape-q8_0 $BF 2>&1
  kill $P; wait $P; }
{ echo "== main (hark0), long prompt beside 4 streams at $(el) s"
  BF="--concurrency 4,4 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 --long-prompt 4000 --long-after 16" serve 18191 --ctx 8192
  echo "== main (hark0), --ctx 8192, --concurrency 1,16,1,16 at $(el) s"
  BF="--concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7" serve 18192 --ctx 8192
  echo "== done at $(el) s"; } > $OUT/serve.log 2>&1
cat $OUT/tests.log $OUT/serve.log
(cd $OUT && tar -czf logs.tgz *.v.log hserve-*.log && rm *.v.log hserve-*.log)
