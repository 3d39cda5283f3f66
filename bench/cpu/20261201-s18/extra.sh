#!/bin/bash
# Third call on table.sh's warm machine (eighteenth session): two more rounds of the LLM rows at 2 threads (pinned;
# the table's two rounds spread 0.76-1.11 for pp512), then the GPU: hark serve --backend cuda --batch-gpu with the
# merged main's defaults (the paged split, the batched value loop) against hark bench serve --concurrency 1,16,1,16,
# the same with the split off, and the 4,000-token prompt beside 4 streams with PromptBeside 4 and 12
# (HARK_BATCH_PROMPT_BESIDE). $K holds hark-full.xz (CGO_ENABLED=0 go build -trimpath -ldflags='-s -w'
# -tags hark_nocubin of the measured commit), run with the checkout's cubins.
set -u
K=$(cd "$K" && pwd); R=$PWD; OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/s18c
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT; cd $W && [ -x peers/bin/llama-bench ] || { echo "not table.sh's machine"; exit 3; }
xz -dc $K/hark-full.xz > hark-full && chmod +x hark-full
M8=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
{ echo "== LLM T=2 rounds 3-4 at $(el) s; $(cat /proc/loadavg)"
for round in 3 4; do
  echo "== round $round LLM T=2 hark"; taskset -c 0-1 ./hark bench llm --backend cpu --model $M8 -t 2 -r 3 --pp 512 --tg 128 2>&1 | grep -E '^\| llama|^samples'
  echo "== round $round LLM T=2 llama-bench"; taskset -c 0-1 ./peers/bin/llama-bench -m $M8 -t 2 -r 3 -p 512 -n 128 -o json | python3 -c '
import json,sys
for r in json.load(sys.stdin):
    t="pp%d"%r["n_prompt"] if r["n_prompt"] else "tg%d"%r["n_gen"]
    print("llama-bench %s t=%d mean %.2f samples t/s: %s"%(t,r["n_threads"],r["avg_ts"]," ".join("%.2f"%x for x in r["samples_ts"])))'
done; echo "== done at $(el) s"; } > $OUT/extra-llm.log 2>&1
export HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
mkdir -p models && ln -sf $M8 models/smollm2-shape-q8_0.gguf
serve() { # $1: port, $2...: serve flags; then bench flags in $BF
  ./hark-full serve --models-dir $W/models --backend cuda --batch-gpu --timeout 5m --addr 127.0.0.1:$1 "${@:2}" > $OUT/hserve-$1.log 2>&1 &
  P=$!
  for i in $(seq 300); do (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null && break; sleep 0.2; done
  timeout 100 ./hark-full bench serve --url http://127.0.0.1:$1 --model smollm2-shape-q8_0 $BF 2>&1
  kill $P; wait $P; }
B16="--concurrency 1,16,1,16 --prompt-tokens 128 --max-tokens 128 --temperature 0.7"
LBF="--concurrency 4 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 --long-prompt 4000 --long-after 16"
{ echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  echo "== 16 streams, defaults at $(el) s"; BF=$B16 serve 18101 --ctx 8192
  echo "== 16 streams, split off (HARK_CUDA_TUNE=AttnPagedChunk=4194304) at $(el) s"; HARK_CUDA_TUNE=AttnPagedChunk=4194304 BF=$B16 serve 18102 --ctx 8192
  echo "== long prompt beside 4 streams, defaults at $(el) s"; BF=$LBF serve 18103 --ctx 8192
  echo "== long prompt beside 4 streams, PromptBeside 12 at $(el) s"; HARK_BATCH_PROMPT_BESIDE=12 BF=$LBF serve 18104 --ctx 8192
  echo "== long prompt beside 4 streams, PromptBeside 4 at $(el) s"; HARK_BATCH_PROMPT_BESIDE=4 BF=$LBF serve 18105 --ctx 8192
  echo "== done at $(el) s"; } > $OUT/extra-serve.log 2>&1
(cd $OUT && tar -czf extra-serve-logs.tgz hserve-*.log && rm hserve-*.log)
cat $OUT/extra-llm.log $OUT/extra-serve.log
