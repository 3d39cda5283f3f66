#!/bin/bash
# GPU call 3 for issue 34 round 8 (bench/cuda/20261130-decode-r8/): this round's third commit (the Whisper decoder's
# Q|K|V as one product over the matrices stacked at load). msltest on the GPU (HARK_MSLTEST_DEVICE=cuda): jfk against
# the float-activation CPU (greedy and beam 5) and stories260K's golden tokens, normal, permuted-block, NaN-poisoned;
# then the kit Whisper encoder/decoder twice and the decoder profile. Run from the repository root with $K holding
# hark.xz, msltest.test.xz, wq8.xz and data.tar.xz (as call 2): K=.gpu/decode bash .gpu/decode/call3.sh
set -u
K=${K:-.gpu/decode}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in hark msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
{ nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  for mode in normal permuted poison; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261130";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== msltest $mode ($E) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda timeout 120 ./msltest.test -test.run '^TestE2E(WhisperJFK|Stories)$' -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$mode.v.log | head -20
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
(cd $OUT && tar -czf msltest-logs.tgz msltest-*.v.log && rm msltest-*.v.log)
{ for rep in 1 2; do
    echo "== whisper (rep $rep) at $(el) s"; ./hark bench whisper --backend cuda -r 5 2>&1 | grep -E '^\| |^samples|cuda (encode|decode)'
  done
  echo "== whisper decoder profile at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench whisper --backend cuda -r 2 2>&1 | grep -A14 'decode profile'
  echo "== end at $(el) s"; } > $OUT/timed.log 2>&1
cat $OUT/tests.log $OUT/timed.log
