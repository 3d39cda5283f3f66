#!/bin/bash
# Lead's check of the merged tree (2026-11-30, tenth session: issue #34 round 7, #35 round 4, #33's one-row batch
# step and CPU attention), first call: the cuda package's GPU tests in normal, permuted-block, NaN-poisoned runs and
# with HARK_CUDA_NATIVE=0 (as bench/cuda/20261130-s9-check/callB.sh's first block). Run from the repository root
# with $K holding cuda.test.xz, wq8.xz and data.tar.xz (the two calls' binaries exceed one transfer together).
set -u
K=${K:-.gpu/s10a}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models /w/models && cd /w
for b in cuda.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
TOK=/w/shared/llm-kit/tokenizers/smollm2
{ nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.sm,clocks.mem --format=csv
  for mode in normal permuted poison nonative; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261130";; poison) E="HARK_CUDA_POISON=1";; nonative) E="HARK_CUDA_NATIVE=0";; esac
    G='^TestGPU(StoriesReplay|SharedByTwoModels)$'; [ $mode = normal ] && G='^TestGPU(Errors|StoriesReplay|SharedByTwoModels)$'
    echo "== cuda.test $mode ($E, -run $G) at $(el) s"
    env $E timeout 100 ./cuda.test -test.run "$G" -test.v -test.count=1 > $OUT/cuda-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/cuda-$mode.v.log | head -20
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
(cd $OUT && tar -czf cuda-logs.tgz cuda-*.v.log && rm cuda-*.v.log)
cat $OUT/tests.log
