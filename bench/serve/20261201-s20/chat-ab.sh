#!/bin/bash
# chat A/B: two hark serve (base, final) side by side, one streamed chat each a round through the official client, order swapped
R=/work/main; cd /tmp/s20/ab
/tmp/s20/hark-base serve --models-dir models --backend cpu --threads 2 --addr 127.0.0.1:18201 > base.log 2>&1 & A=$!
/tmp/s20/hark-final serve --models-dir models --backend cpu --threads 2 --addr 127.0.0.1:18202 > final.log 2>&1 & B=$!
for p in 18201 18202; do for _ in $(seq 100); do curl -sf http://127.0.0.1:$p/v1/models > /dev/null && break; sleep 0.2; done; done
chat() { node $R/serve/testdata/openai-client/stream-speed.mjs http://127.0.0.1:$1 smollm2-shape-q8_0 1 128 | grep '^run 1' | sed 's/.*, //'; }
chat 18201 >/dev/null; chat 18202 > /dev/null
for r in $(seq ${1:-10}); do
  if [ $((r%2)) = 1 ]; then echo "round $r base $(chat 18201) final $(chat 18202)"; else echo "round $r final $(chat 18202) base $(chat 18201)"; fi
done
kill $A $B
