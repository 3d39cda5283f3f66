#!/bin/bash
# Final check, call 1 of 3 on a fresh machine (eighteenth session): the cubins of the merged main's PTX
# (bench/cuda/cubins.sh), and the first parts of bench/cuda/20261201-s17/stage.sh (with W=/w/s18). $K holds q8.xz.00, q8.xz.01, data.tar.xz.
set -u
OUT=${OUT:-/tmp/out}; S=$(date +%s); W=${W:-/w/s18}
mkdir -p $OUT $W/shared/whisper-kit/models
( OUT=$W bash bench/cuda/cubins.sh > /dev/null 2>&1; echo "cubins done at $(( $(date +%s) - S )) s" >> $W/cubins.log ) &
CB=$!
W=$W bash bench/cuda/20261201-s17/stage.sh > /dev/null
tar -C $W/shared -xJf $W/data.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/g1-machine.log 2>&1
wait $CB
cat $W/cubins.log > $OUT/g1-cubins.log
(cd $W && tar -cf $OUT/cubin.tar cubin)
cat $OUT/g1-machine.log $OUT/g1-cubins.log | tail -30
