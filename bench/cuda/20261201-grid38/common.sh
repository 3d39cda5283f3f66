# grid38's call2.sh and call3.sh (one warm machine, one after the other): where they work, the SmolLM2-shape q8_0
# file, and the two measures, each of the binaries in $W/$1 (base: main 3d3a2c5's, new: the branch's).
W=/w/grid38
F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
el() { echo $(( $(date +%s) - S )); }
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261201";; poison) echo "HARK_CUDA_POISON=1";; esac; }
# BenchmarkGPUBatchStep at 1, 4 and 16 rows on the server's mat-vec rule (HARK_BENCH_MATMUL_ROWS=17)
bench() {
  echo "== $1 BenchmarkGPUBatchStep at $(el) s"
  HARK_BENCH_MATMUL_ROWS=17 HARK_BENCH_MODEL=$F timeout 60 $1/cuda.test -test.run '^$' -test.bench 'GPUBatchStep' -test.benchtime 256x 2>&1 | grep -E 'ms/step|FAIL|panic'; }
# hark serve --backend cuda --batch-gpu --ctx 8192 against hark bench serve --concurrency 1,16,1,16 (128 prompt +
# 128 generated tokens, temperature 0.7); $2 the port
serve() {
  echo "== $1 ${HARK_CUDA_TUNE:+(HARK_CUDA_TUNE=$HARK_CUDA_TUNE) }hark serve --backend cuda --batch-gpu --ctx 8192; hark bench serve --concurrency 1,16,1,16 at $(el) s"
  $1/hark serve --models-dir $W/models --backend cuda --batch-gpu --ctx 8192 --timeout 5m --addr 127.0.0.1:$2 > $W/v/hserve-$1-$2.log 2>&1 &
  local SP=$!
  for i in $(seq 300); do (echo > /dev/tcp/127.0.0.1/$2) 2>/dev/null && break; sleep 0.2; done
  timeout 90 $1/hark bench serve --url http://127.0.0.1:$2 --model smollm2-shape-q8_0 --concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 2>&1
  kill $SP; wait $SP; }
