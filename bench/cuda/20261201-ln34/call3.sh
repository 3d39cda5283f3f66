#!/bin/bash
# ln34 (issue #34), call 3 of 3 (calls 1-2's machine): main's hark (3d3a2c5, main's cubins, no JIT) from $K
# beside the branch's, alternated in 3 rounds of `hark bench whisper --backend cuda`, and main's graphs-off profile.
set -u
K=$(cd "${K:-.gpu/ln34}" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/ln34}; S=$(date +%s); mkdir -p $OUT
el() { echo $(( $(date +%s) - S )); }
[ -e $W/hark-ln34 ] || { echo "not call 2's machine"; exit 3; }
cd $W; xz -dc $K/hark-main.xz > hark-main && chmod +x hark-main
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
B="bench whisper --backend cuda --model q8.bin --audio $W/jfk.wav --tokens 64 -r 3"
{ for r in 1 2 3; do
    echo "=== round $r at $(el) s"
    for v in main ln34; do echo "== $v"; ./hark-$v $B 2>&1 | grep -E 'decode \(|encode \(|samples decode|greedy window:'; done
  done
  echo "== profile main (graphs off) at $(el) s"
  HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 ./hark-main $B 2>&1 | grep -E -A16 'cuda decode profile'
  echo "== done at $(el) s"; } > $OUT/call3-bench.log 2>&1
cat $OUT/call3-bench.log
