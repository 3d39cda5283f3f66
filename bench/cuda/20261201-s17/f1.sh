#!/bin/bash
# Final check, call 1 of 4 on a fresh machine: the cubins of the merged main's PTX (bench/cuda/cubins.sh) beside
# whisper.cpp's CUDA build (build-peers.sh, for the excerpt's same-call comparison), and stage.sh's first parts.
# $K holds q8.xz.00, q8.xz.01, whisper-cuda-src.tar.xz, build-peers.sh, data.tar.xz, trim.xz.
set -u
R=$(pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=${W:-/w/s17}
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/shared/whisper-kit/models $W/src
( OUT=$W bash bench/cuda/cubins.sh > /dev/null 2>&1; echo "cubins done at $(el) s" >> $W/cubins.log ) &
CB=$!
bash bench/cuda/20261201-s17/stage.sh > /dev/null
tar -C $W/shared -xJf $W/data.tar.xz
tar -C $W/src -xJf $W/whisper-cuda-src.tar.xz
export PATH=$PATH:/usr/local/cuda/bin
{ echo "== whisper.cpp CUDA build at $(el) s"; bash $W/build-peers.sh build $W/src $W/pc --cuda whisper 2>&1 | tail -20; echo "build exit $? at $(el) s"; ls -la $W/pc/bin; } > $OUT/f1-build.log 2>&1
wait $CB
cat $W/cubins.log > $OUT/f1-cubins.log
(cd $W && tar -cf $OUT/cubin.tar cubin)
cat $OUT/f1-cubins.log $OUT/f1-build.log | tail -40
