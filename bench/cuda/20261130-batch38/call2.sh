#!/bin/bash
# Second call (issue #38, branch batch38): hark serve --batch-gpu with 16-row steps on the mat-vec products on CUDA
# (runtime's batchMatMulRows, hark2) against the first call's binary (hark: GEMM from 16 rows), same machine, same
# commands as call.sh's serve part. $K holds hark.xz, hark2.xz and data.tar.xz.
set -u
K=${K:-.gpu/batch38}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w2/shared /w2/models && cd /w2
for b in hark hark2; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w2/shared -xJf $K/data.tar.xz
TOK=/w2/shared/llm-kit/tokenizers/smollm2
./hark bench llm --backend cpu --dir /w2/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > $OUT/write2.log 2>&1
ln -sf /w2/m/smollm2-135m-shape-v1-L30-q8_0.gguf /w2/models/smollm2-shape-q8_0.gguf
{ for h in hark2 hark; do
    echo "== $h: hark serve --backend cuda --batch-gpu; hark bench serve --concurrency 1,16,16 at $(el) s"
    ./$h serve --models-dir /w2/models --backend cuda --batch-gpu --timeout 5m --addr 127.0.0.1:18091 > $OUT/hserve-$h.log 2>&1 &
    P=$!
    for i in $(seq 300); do (echo > /dev/tcp/127.0.0.1/18091) 2>/dev/null && break; sleep 0.2; done
    timeout 100 ./$h bench serve --url http://127.0.0.1:18091 --model smollm2-shape-q8_0 --concurrency 1,16,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 2>&1
    kill $P; wait $P
  done; echo "== done at $(el) s"; } > $OUT/serve2.log 2>&1
cat $OUT/serve2.log; grep -i "preparing\|ready" $OUT/hserve-*.log | head -3
