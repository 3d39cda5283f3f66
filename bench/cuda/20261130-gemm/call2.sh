#!/bin/bash
# GPU call 2 for issue #35 round 4 (branch gemm): the Whisper encoder with call 1's hark (the kit q8_0 model did not fit
# call 1's transfer beside the test binaries). Run from the repository root as K=.gpu/gemm2 bash .gpu/gemm2/call2.sh,
# $K holding hark.xz and wq8.xz; run right after call 1 (or 3) on the same machine, whose /w/shared holds jfk.wav.
set -u
K=${K:-.gpu/gemm2}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models /w2 && cd /w2
xz -dc $K/hark.xz > hark && chmod +x hark
xz -dc $K/wq8.xz > /w/shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  echo "== whisper at $(el) s"; ./hark bench whisper --backend cuda -r 5 2>&1
  echo "== whisper again at $(el) s"; ./hark bench whisper --backend cuda -r 5 2>&1
  echo "== done at $(el) s"; } > $OUT/whisper.log 2>&1
grep -vE '^(samples|load average)' $OUT/whisper.log | tail -40
