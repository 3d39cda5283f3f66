#!/bin/bash
# GPU call 4 for issue 34 round 7 (bench/cuda/20261130-decode/), as call 2 on commit 4120cc9: jfk on the GPU (msltest
# TestE2EWhisperJFK against the float-activation CPU; its 5-beam decoder's mat-vecs now load 5 activation rows 16 bytes
# at a time), normal, permuted-block, NaN-poisoned; the kit Whisper decoder's speed and profile. Run from the repository root with $K holding hark.xz, msltest.test.xz
# (built with -ldflags='-s -w'), wq8.xz (the kit q8_0 model) and data.tar.xz (stories260K, its golden JSON, jfk; no
# cuda.test and no tokenizer: the transfer limit): K=.gpu/decode4 bash .gpu/decode4/call4.sh
set -u
K=${K:-.gpu/decode}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in hark msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared
{ for mode in normal permuted poison; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261130";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== msltest jfk $mode ($E) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.run '^TestE2EWhisperJFK$' -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual'; echo "exit ${PIPESTATUS[0]}"
  done
  echo "== whisper at $(el) s"; ./hark bench whisper --backend cuda -r 5 2>&1 | grep -E '^\| |^samples|cuda (encode|decode)'
  echo "-- profile"; HARK_CUDA_PROFILE=1 ./hark bench whisper --backend cuda -r 2 2>&1 | grep -A10 'decode profile'
  echo "== end at $(el) s"; } > $OUT/tests.log 2>&1
cat $OUT/tests.log
