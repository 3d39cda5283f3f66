#!/bin/bash
# ln34 (issue #34), call 4 (calls 1-3's machine, main's hark staged by call 3: main's cubins, no JIT): the
# mat-vecs' CUDA geometry for the decoder step's k = 384 and 1536 products (item 3 of the brief), by
# HARK_CUDA_TUNE: weight rows a warp (MatVecRows, cuda 2) and warps a threadgroup (MatVecSIMDGroups, cuda 4),
# 2 rounds of `hark bench whisper --backend cuda` over the configurations in turn.
set -u
R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/ln34}; S=$(date +%s); mkdir -p $OUT
el() { echo $(( $(date +%s) - S )); }
[ -e $W/hark-main ] || { echo "not call 3's machine"; exit 3; }
cd $W; export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
B="bench whisper --backend cuda --model q8.bin --audio $W/jfk.wav --tokens 64 -r 3"
{ for r in 1 2; do
    echo "=== round $r at $(el) s"
    for c in base MatVecRows=1 MatVecRows=4 MatVecSIMDGroups=2 MatVecSIMDGroups=8 MatVecRows=1,MatVecSIMDGroups=8 MatVecRows=4,MatVecSIMDGroups=2; do
      E=""; [ $c = base ] || E="HARK_CUDA_TUNE=$c"
      echo "== $c"; env $E ./hark-main $B 2>&1 | grep -E 'decode \(|samples decode'
    done
  done; echo "== done at $(el) s"; } > $OUT/call4-geometry.log 2>&1
cat $OUT/call4-geometry.log
