#!/bin/bash
# Lead's check of the fourteenth session's merged main (issue #34 round 10's ticket merge, #36's chained Whisper window
# decode, #38's batched step, the staging of host copies they share), first of two calls on one warm H200: the cuda
# package's GPU tests (golden tokens on three paths, the batch engine at 16 sequences on the mat-vec path, stories260K
# and the kit's jfk on one backend) in normal, permuted-block and NaN-poisoned runs; leaves the kit model in /w for
# callF2.sh. Run from the repository root with $K holding cuda.test.xz, wq8.xz and data.tar.xz.
set -u
K=${K:-.gpu/finA}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
xz -dc $K/cuda.test.xz > cuda.test && chmod +x cuda.test
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
{ nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  for mode in normal permuted poison; do
    E=$(modeenv $mode); G='^TestGPU(StoriesReplay|SharedByTwoModels|BatchEqualsSequential)$'
    [ $mode = normal ] && G='^TestGPU(Errors|StoriesReplay|SharedByTwoModels|BatchEqualsSequential)$'
    echo "== cuda.test $mode ($E) at $(el) s"
    env $E timeout 150 ./cuda.test -test.run "$G" -test.v -test.count=1 > $OUT/cuda-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|peak' $OUT/cuda-$mode.v.log | head -20
  done; echo "== done at $(el) s"; } > $OUT/tests-cuda.log 2>&1
(cd $OUT && tar -czf test-logs.tgz *.v.log && rm *.v.log)
cat $OUT/tests-cuda.log
