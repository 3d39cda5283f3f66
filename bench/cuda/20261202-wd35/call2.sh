#!/bin/bash
# Round 6, call 2 of 3 (call 1's warm machine: $W holds the branch's cubins, msltest.test, the data, q8.xz.00),
# K=.gpu/wd35/c2 bash $K/call2.sh. $K holds q8.xz.01 (the model's last part) and hark-main.xz.00 (main 6f24a63's
# hark, -tags hark_nocubin, first part; call 3 brings the rest: a call carries the checkout's ~46 MiB on disk plus
# ~18 MiB). Joins the model, then TestE2EWhisperJFK through CUDA on the branch's kernels (greedy and beam 5 against
# both CPU paths), normal, permuted and poisoned, side by side.
set -u
R=$(pwd); K=${K:-.gpu/wd35/c2}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=${W:-/w/wd35}
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT; [ -d $W/cubin ] && [ -x $W/msltest.test ] && [ -e $W/q8.xz.00 ] || { echo "not call 1's machine"; exit 3; }
cd $W; cp $K/q8.xz.01 $K/hark-main.xz.00 $W/
[ -e q8.bin ] || cat q8.xz.0? | xz -dc > q8.bin
sha256sum q8.bin > $OUT/call2-stage.log
cp -n q8.bin shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$W/cubin
{ for m in normal permuted poison; do
    case $m in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
    ( env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 200 ./msltest.test -test.run '^TestE2EWhisperJFK$' -test.v -test.count=1 > v/jfk-$m.v.log 2>&1; echo "exit $? at $(el) s" >> v/jfk-$m.v.log ) &
  done; wait
  for m in normal permuted poison; do
    echo "-- jfk $m: $(tail -1 v/jfk-$m.v.log), $(grep -E '^(ok|PASS|FAIL)' v/jfk-$m.v.log | tail -1)"
    grep -E '^(\s*--- (FAIL|PASS|SKIP)|panic)' v/jfk-$m.v.log | head; grep -E 'beams [15]: msltest on cuda' v/jfk-$m.v.log | cut -c1-200
  done; echo "== tests done at $(el) s"; } > $OUT/call2-tests.log 2>&1
(cd v && tar -cJf $OUT/call2-test-logs.tar.xz jfk-*.v.log)
cat $OUT/call2-stage.log $OUT/call2-tests.log
