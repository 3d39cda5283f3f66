#!/bin/bash
# Issue #38 on the H200 (2026-12-01, branch paged38), second call, after callA's figures showed the multi-row
# mat-vecs with 16 rows a threadgroup slower than mat_vec at 16 rows (288 warps for a 576-wide product, each running
# 16 rows in a row): BenchmarkGPUBatchStep on the mat-vec path (HARK_BENCH_MATMUL_ROWS=17, as the server steps 16
# rows on CUDA) for this branch's cuda.test at MatVecMultiBatch 4 (the default), 16, 2 and 1
# and with the multi-row instances off (MatVecMultiRows=1000000: mat_vec under this branch's fused plan; main's cuda.test did not fit beside hark in the
# 64 MiB a call carries); the best
# batch profiled, then hark serve --batch-gpu at it (HARK_CUDA_TUNE), hark bench serve --concurrency 1,16,1,16. $K holds hark.xz, cuda.test.xz and data.tar.xz (the smollm2 tokenizer).
set -u
K=${K:-.gpu/paged38b}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared /w/models && cd /w
for b in hark cuda.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin HARK_BENCH_MATMUL_ROWS=17
TOK=/w/shared/llm-kit/tokenizers/smollm2
F=/w/m/smollm2-135m-shape-v1-L30-q8_0.gguf
[ -f $F ] || ./hark bench llm --backend cpu --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > $OUT/write.log 2>&1
ln -sf $F /w/models/smollm2-shape-q8_0.gguf
bench() { # $1 binary, $2 tuning ("" for none), $3 rows regexp
  echo "== $1 ${2:-(default)} at $(el) s"
  env ${2:+HARK_CUDA_TUNE=$2} HARK_BENCH_MODEL=$F timeout 60 ./$1 -test.run '^$' -test.bench "GPUBatchStep/rows=($3)\$" -test.benchtime 256x 2>&1 | grep -E 'ms/step|FAIL|panic'; }
{ bench cuda.test "" 1 # the first process of this PTX: the driver's JIT
  bench cuda.test "" '1|4|16'
  bench cuda.test MatVecMultiBatch=16 16
  for mb in 2 1; do bench cuda.test MatVecMultiBatch=$mb '4|16'; done
  bench cuda.test MatVecMultiRows=1000000 '4|16'
  echo "== done at $(el) s"; } > $OUT/batchstep.log 2>&1
# the batch with the fewest ms a 16-row step (default 4 if none parses)
BEST=$(awk '/^== cuda.test MatVecMultiBatch=/{split($3,a,"=");mb=a[2]} /^== cuda.test \(default\)/{mb=4} /^== cuda.test MatVecMultiRows/{mb=""} /^== cuda-base/{mb=""} /rows=16-/{ if (mb!="") { v=$3+0; if (best=="" || v<bv) {best=mb; bv=v} } } END{print (best==""?4:best)}' $OUT/batchstep.log)
T=MatVecMultiBatch=$BEST
{ echo "== best: $T; profiled (graphs off) at $(el) s"
  HARK_CUDA_TUNE=$T HARK_CUDA_PROFILE=1 HARK_BENCH_MODEL=$F timeout 60 ./cuda.test -test.run '^$' -test.bench 'GPUBatchStep/rows=16$' -test.benchtime 128x 2>&1
  echo "== done at $(el) s"; } > $OUT/profile.log 2>&1
serve() { # $1: port, $2...: serve flags; bench flags in $BF
  HARK_CUDA_TUNE=$T ./hark serve --models-dir /w/models --backend cuda --batch-gpu --timeout 5m --addr 127.0.0.1:$1 "${@:2}" > $OUT/hserve-$1.log 2>&1 &
  P=$!
  for i in $(seq 300); do (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null && break; sleep 0.2; done
  timeout 90 ./hark bench serve --url http://127.0.0.1:$1 --model smollm2-shape-q8_0 $BF 2>&1
  kill $P; wait $P; }
{ echo "== HARK_CUDA_TUNE=$T hark serve --backend cuda --batch-gpu; hark bench serve --concurrency 1,16,1,16 at $(el) s"
  BF="--concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7" serve 18092
  echo "== done at $(el) s"; } > $OUT/serve.log 2>&1
cat $OUT/batchstep.log $OUT/profile.log $OUT/serve.log
(cd $OUT && tar -czf serve-logs.tgz hserve-*.log && rm hserve-*.log)
