#!/bin/bash
# Issue #38, nineteenth session, branch grid38, call 4, on call2/3's warm machine (its model file and JIT cache; exits
# at once where they are gone): the branch's hark serve --batch-gpu --ctx 8192 with the cuda family's mat-vec batch as
# shipped (8 activation rows a threadgroup) and with HARK_CUDA_TUNE=MatVecBatch=4 (call3's fastest 16-row step),
# alternated, against hark bench serve --concurrency 1,16,1,16. $K holds hark.xz, common.sh:
#     K=.gpu/grid38a bash .gpu/grid38a/call4.sh
set -u
K=${K:-.gpu/grid38a}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD
. $K/common.sh
[ -f $F ] && [ -x $W/new/hark ] || { echo "not call2's machine: nothing run"; exit 3; }
cd $W
export HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
{ serve new 18121; HARK_CUDA_TUNE=MatVecBatch=4 serve new 18122; serve new 18123; HARK_CUDA_TUNE=MatVecBatch=4 serve new 18124
  echo "== done at $(el) s"; } > $OUT/serve.log 2>&1
(cd $W/v && tar -czf $OUT/serve-logs.tgz hserve-*.log && rm hserve-*.log)
cat $OUT/serve.log
