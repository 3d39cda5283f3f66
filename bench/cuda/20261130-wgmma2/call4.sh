#!/bin/bash
# GPU call 4 for issue #35's GEMM target, round 6 (branch wgmma2): the committed kernel (call 3's variant G, its PTX
# byte-identical, now embedded) timed once more and profiled with Nsight Compute. Run as K=.gpu/wgmma2 bash
# .gpu/wgmma2/call4.sh; $K holds cuda.test.xz.
set -u
K=${K:-.gpu/wgmma2}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w && cd /w && xz -dc $K/cuda.test.xz > cuda.test && chmod +x cuda.test
{ echo "== GEMM 4096x4096x512 at $(el) s"; timeout 90 ./cuda.test -test.run XXX -test.bench 'GPUMatMul/f16/(big_h|wgmma)' -test.benchtime 10x 2>&1 | grep -E 'Benchmark|FAIL|panic|skip|rror'
  NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  echo "== ncu ($NCU) at $(el) s"; HARK_CUDA_GRAPHS=0 timeout 60 $NCU --clock-control none --section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --section SchedulerStats --section WarpStateStats -k regex:'^hark_mat_mul_wgmma_f16$' --launch-count 1 \
    ./cuda.test -test.run XXX -test.bench 'GPUMatMul/f16/wgmma$' -test.benchtime 1x > $OUT/ncu-wgmma.log 2>&1; echo "exit $? at $(el) s"
} > $OUT/gemm.log 2>&1
cat $OUT/gemm.log
grep -E 'Duration|Throughput|Spilling Requests|Registers Per|Achieved Occupancy|Issued Warp|No Eligible|Warp Cycles Per Issued|bank' $OUT/ncu-wgmma.log | head -20
