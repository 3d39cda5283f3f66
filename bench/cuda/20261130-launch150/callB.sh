#!/bin/bash
# Issue #34 round 10 (branch launch150), call B on the H200, right after call A on the warm machine: msltest on the
# GPU (HARK_MSLTEST_DEVICE=cuda: the attention kernels with the ticket forms, stories260K's golden tokens, jfk greedy
# and, in the normal run, beam 5 against the float-activation CPU), each normal, permuted-block and NaN-poisoned (the
# cuda package's GPU tests did not fit the transfer beside the kit model). Run from the repository root with $K
# holding msltest.test.xz, wq8.xz and data.tar.xz.
set -u
K=${K:-.gpu/launch150b}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
CH='AttentionMergeChunks|RopeAttentionKernel|AttentionKernel|E2EStories|E2EWhisperJFK'
{ for mode in normal permuted poison; do
    E=$(modeenv $mode); X="$CH"
    [ $mode = normal ] && X="$CH|KernelsOtherTunings"
    echo "== msltest $mode ($E) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.short -test.run "^Test($X)\$" -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    if [ $mode = normal ]; then echo "== msltest $mode, jfk greedy and beam 5 (not short) at $(el) s"
      HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.run '^TestE2EWhisperJFK$' -test.v -test.count=1 >> $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"; fi
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$mode.v.log | grep -v -- '--- PASS' | head -20
    grep -E -- '--- PASS' $OUT/msltest-$mode.v.log | grep -vE '^\s{8}' | head -20
  done; echo "== msltest done at $(el) s"; } > $OUT/tests-msl.log 2>&1
(cd $OUT && tar -czf test-logs.tgz *.v.log && rm *.v.log)
cat $OUT/tests-msl.log
