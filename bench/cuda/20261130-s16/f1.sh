#!/bin/bash
# Final check, call 1 (a fresh machine), from the checkout's root of the merged main: the cubins made from this
# checkout's PTX (bench/cuda/cubins.sh, kept in /w/f/cubin and brought back as $OUT/cubin.tar), whisper.cpp's CUDA
# build for the same-run comparison (tools/peers/build-peers.sh, whisper tree only, other GPU backends removed from
# the source), the test data unpacked for the later calls and the first half of the kit model's xz kept (a call's
# transfer, the checkout's ~46 MiB included, takes at most 64 MiB: the model's 20 MB goes in two halves). $K holds
# wq8.xz.a, data.tar.xz, trim.xz, whisper-cuda-src.tar.xz, build-peers.sh.
set -u
K=${K:-.gpu/f1}; K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/f
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/shared/whisper-kit/models $W/src
( OUT=$W bash bench/cuda/cubins.sh > /dev/null 2>&1; echo "cubins done at $(el) s" >> $W/cubins.log ) &
CB=$!
cp $K/wq8.xz.a $W/
tar -C $W/shared -xJf $K/data.tar.xz
xz -dc $K/trim.xz > $W/trim && chmod +x $W/trim
tar -C $W/src -xJf $K/whisper-cuda-src.tar.xz
export PATH=$PATH:/usr/local/cuda/bin
{ echo "== whisper.cpp CUDA build at $(el) s"; bash $K/build-peers.sh build $W/src $W/pc --cuda whisper 2>&1 | tail -20; echo "build exit $? at $(el) s"; ls -la $W/pc/bin; } > $OUT/build.log 2>&1
wait $CB
cat $W/cubins.log > $OUT/cubins.log
(cd $W && tar -cf $OUT/cubin.tar cubin)
cat $OUT/cubins.log $OUT/build.log | tail -40
