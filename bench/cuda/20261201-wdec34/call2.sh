#!/bin/bash
# wdec34 call 2 of 2 (call 1's warm machine): the model's last part and pair.tar.xz (hark-main: main 78e82cd;
# hark-wdec34: the branch; both -tags hark_nocubin with the same PTX, so the checkout's cubins serve both).
# TestE2EWhisperJFK through CUDA (device tuning) in normal (beams 1 and 5), permuted and poisoned (greedy) runs;
# then hark bench whisper, kit q8_0, 2 alternating rounds of: main, wdec34, wdec34 with AttnTicketRound=1 (main's
# geometry), =16; then one graphs-off profile of each of main and wdec34.
set -u
K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/wdec34}; S=$(date +%s); mkdir -p $OUT
el() { echo $(( $(date +%s) - S )); }
[ -e $W/q8.xz.01 ] || { echo "not call 1's machine"; exit 3; }
cp $K/q8.xz.02 $W/ && cd $W && xz -dc $K/pair.tar.xz | tar -x && cat q8.xz.0? | xz -dc > q8.bin && sha256sum q8.bin
ln -sf $W/q8.bin shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin; ls -la
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
{ for mode in normal permuted poison; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
    SH=-test.short; [ $mode = normal ] && SH=
    echo "== TestE2EWhisperJFK $mode ($E) $SH at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 100 ./msltest.test -test.run '^TestE2EWhisperJFK$' $SH -test.v -test.count=1 > $OUT/e2e-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|beams [15]:' $OUT/e2e-$mode.v.log | cut -c1-240 | head -12
  done
  echo "== done at $(el) s"; } > $OUT/tests.log 2>&1
cat $OUT/tests.log
B="bench whisper --backend cuda --model q8.bin --audio shared/audio/jfk.wav --tokens 64 -r 3"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
  for r in 1 2; do
    echo "== round $r main at $(el) s"; ./hark-main $B 2>&1 | grep -E 'decode|encode \(|samples'
    echo "== round $r wdec34 at $(el) s"; ./hark-wdec34 $B 2>&1 | grep -E 'decode|encode \(|samples'
    echo "== round $r wdec34 AttnTicketRound=1 at $(el) s"; HARK_CUDA_TUNE=AttnTicketRound=1 ./hark-wdec34 $B 2>&1 | grep -E 'decode|encode \(|samples'
    echo "== round $r wdec34 AttnTicketRound=16 at $(el) s"; HARK_CUDA_TUNE=AttnTicketRound=16 ./hark-wdec34 $B 2>&1 | grep -E 'decode|encode \(|samples'
  done
  echo "== done at $(el) s"; } > $OUT/bench.log 2>&1
{ for b in main wdec34; do echo "== profile $b at $(el) s"; HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 ./hark-$b bench whisper --backend cuda --model q8.bin --audio shared/audio/jfk.wav --tokens 64 -r 1 2>&1; done
  echo "== done at $(el) s"; } > $OUT/profile.log 2>&1
cat $OUT/bench.log; grep -A12 'decode profile' $OUT/profile.log
