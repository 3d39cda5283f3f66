#!/bin/bash
# ln34 (issue #34), call 2 of 3 (call 1's machine: q8.xz.00-01, msltest, the JIT cache of the branch's PTX): the
# model's last part (q8.xz.02), jfk and the branch's hark from $K; TestE2EWhisperJFK (greedy and beam 5 through the
# new plan) through CUDA in normal, permuted-block and NaN-poisoned runs; then the decoder step, `hark bench whisper
# --backend cuda` in 3 rounds, each the branch's hark (mat_vec_norm_*: a LayerNorm in its residual product's launch,
# 35 launches a token) and the same with HARK_CUDA_TUNE=MatVecNormTicket=1 (the product, then mat_vec_norm_rows:
# main's 47 launches and kernels); one graphs-off profile of each.
set -u
K=$(cd "${K:-.gpu/ln34}" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/ln34}; S=$(date +%s); mkdir -p $OUT
el() { echo $(( $(date +%s) - S )); }
[ -e $W/msltest.test ] || { echo "not call 1's machine"; exit 3; }
cd $W; cp -n $K/* $W/ 2>/dev/null
for f in hark-ln34 jfk.wav; do [ -e $f ] || xz -dc $f.xz > $f; done; chmod +x hark-ln34
[ -e q8.bin ] || cat q8.xz.0? | xz -dc > q8.bin
mkdir -p shared/whisper-kit/models shared/audio
cp -n q8.bin shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin; cp -n jfk.wav jfk.txt shared/audio/
sha256sum q8.bin jfk.wav > $OUT/call2-tests.log
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
{ for mode in normal permuted poison; do
  case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
  echo "== msltest $mode ($E) at $(el) s"
  env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 120 ./msltest.test -test.run '^TestE2EWhisperJFK$' -test.v -test.count=1 > $OUT/e2e-$mode.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)' $OUT/e2e-$mode.v.log | head -4
  grep -E 'beams [15]: msltest on cuda' $OUT/e2e-$mode.v.log | cut -c1-200
done; echo "== tests done at $(el) s"; } >> $OUT/call2-tests.log 2>&1
(cd $OUT && tar -czf call2-test-logs.tgz *.v.log && rm *.v.log)
B="bench whisper --backend cuda --model q8.bin --audio $W/jfk.wav --tokens 64 -r 3"
{ for r in 1 2 3; do
    echo "=== round $r at $(el) s"
    for v in ln34 tune-off; do
      E=""; [ $v = tune-off ] && E="HARK_CUDA_TUNE=MatVecNormTicket=1"
      echo "== $v"; env $E ./hark-ln34 $B 2>&1 | grep -E 'decode \(|encode \(|samples decode|greedy window:'
    done
  done
  for v in ln34 tune-off; do
    E=""; [ $v = tune-off ] && E="HARK_CUDA_TUNE=MatVecNormTicket=1"
    echo "== profile $v (graphs off) at $(el) s"
    env $E HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 ./hark-ln34 $B 2>&1 | grep -E -A16 'cuda decode profile'
  done
  echo "== done at $(el) s"; } > $OUT/call2-bench.log 2>&1
cat $OUT/call2-tests.log $OUT/call2-bench.log
