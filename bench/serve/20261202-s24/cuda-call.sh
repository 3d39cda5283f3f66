#!/bin/bash
# Issue #33 on CUDA after the stream's writes were grouped (twenty-fourth session): hark bench llm's tg128 chained
# (greedy, context 4096: hark serve's) on the SmolLM2-shaped q8_0 file, then streamed chat at temperature 0.7, 128
# tokens, through the Go client bench/serve/streamspeed against two hark serve side by side: --stream-interval 0
# (every token written at once) and the default (20 ms), three rounds, the order swapped each round, then the bench
# again. $K holds hark.xz and streamspeed.xz (CGO_ENABLED=0 go build -trimpath -ldflags='-s -w', xz) and tok.tar.xz
# (tar -C ../shared -cJf tok.tar.xz llm-kit/tokenizers/smollm2). Usage, repository root: K=.gpu/s24 bash THIS
set -u
K=${K:-.gpu/s24}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w24
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/tok $W/models && cd $W
for b in hark streamspeed; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C $W/tok -xJf $K/tok.tar.xz
B="./hark bench llm --backend cuda --dir $W/m --type q8_0 --tokenizer $W/tok/llm-kit/tokenizers/smollm2 --pp 0 --tg 128 --chain --ctx 4096"
chat() { timeout 60 ./streamspeed -url http://127.0.0.1:$1 -model smollm2-shape-q8_0 -reps 5 -n 128 2>&1; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ./hark --version
  echo "== bench tg128 chained (greedy), -r 5, at $(el) s"; timeout 120 $B -r 5 2>&1 | grep -vE '^  '
  ln -sf "$(ls $W/m/*q8_0.gguf)" $W/models/smollm2-shape-q8_0.gguf
  ./hark serve --models-dir $W/models --backend cuda --stream-interval 0 --addr 127.0.0.1:18090 > $OUT/serve-0.log 2>&1 & P0=$!
  ./hark serve --models-dir $W/models --backend cuda --addr 127.0.0.1:18091 > $OUT/serve-20ms.log 2>&1 & P1=$!
  for p in 18090 18091; do for i in $(seq 150); do (echo > /dev/tcp/127.0.0.1/$p) 2>/dev/null && break; sleep 0.2; done; done
  for r in 1 2 3; do
    if [ $((r % 2)) = 1 ]; then o="18090 18091"; else o="18091 18090"; fi
    for p in $o; do echo "== round $r, $( [ $p = 18090 ] && echo 'every token at once (--stream-interval 0)' || echo 'default (20 ms)'), at $(el) s"; chat $p; done
  done
  kill $P0 $P1; wait $P0 $P1 2>/dev/null
  echo "== bench again at $(el) s"; timeout 120 $B -r 5 2>&1 | grep -vE '^  '
  echo "== done at $(el) s"
} > $OUT/serve-cuda.log 2>&1
cat $OUT/serve-cuda.log
