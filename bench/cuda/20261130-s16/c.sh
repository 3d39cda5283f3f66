#!/bin/bash
# Call C (on calls A and B's machine): its first GPU process is issue #36's cold start. Then, with main 8c975b9+'s
# hark (cubins embedded; the inflated cubins kept in ~/.cache/hark/cubin from the first process on):
# (1) cold start: `hark transcribe --backend cuda --model KIT jfk.wav` (default: beam 5), the machine's first GPU
#     process, HARK_CUDA_STARTUP=1; then again, greedy and beam 5; once with HARK_CUDA_CUBIN_CACHE=off;
# (2) `hark bench whisper --backend cuda` (issue #35's encoder row), the shipped tuning and MatMulMMQ=1000000 (the
#     encoder's products on float activations), with the per-kernel profile of each;
# (3) the 204.2-s excerpt end to end (issue #36's rows), greedy and beam 5, 3 runs each; greedy with MatMulMMQ=1000000;
#     the texts against the CPU's;
# (4) tests on the checkout's cubins: msltest through CUDA with the device's own tuning (HARK_MSLTEST_DEVICE_TUNING=1):
#     TestE2EWhisperJFK (greedy and beam 5) and TestE2EStories in normal, permuted-block and NaN-poisoned runs, cuda's
#     TestCubinGuard, TestGPUSharedByTwoModels and TestGPUStoriesReplay;
# (5) TestE2EWhisperLongForm through CUDA with the device's tuning, and (if beams1 fails) beams1 with MatMulMMQ=1000000.
set -u
K=${K:-.gpu/s16c}; K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/s16
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT; cd $W || { echo "no $W: not call A's machine"; exit 3; }
xz -dc $K/hark.xz > hark && chmod +x hark
export HARK_TESTDATA=$W/shared
W8=$W/shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
JFK=$W/shared/audio/jfk.wav
{ echo "== cold start at $(el) s: the machine's first GPU process (default beam 5)"
  /usr/bin/time -f "first: wall %e s, max RSS %M KB" env HARK_CUDA_STARTUP=1 ./hark transcribe --backend cuda --model $W8 $JFK 2>&1
  for i in 2 3; do /usr/bin/time -f "run $i (beam 5): wall %e s" env HARK_CUDA_STARTUP=1 ./hark transcribe --backend cuda --model $W8 $JFK 2>&1; done
  for i in 1 2; do /usr/bin/time -f "greedy run $i: wall %e s" env HARK_CUDA_STARTUP=1 ./hark transcribe --backend cuda --beam 1 --model $W8 $JFK 2>&1; done
  /usr/bin/time -f "HARK_CUDA_CUBIN_CACHE=off, beam 5: wall %e s" env HARK_CUDA_CUBIN_CACHE=off HARK_CUDA_STARTUP=1 ./hark transcribe --backend cuda --model $W8 $JFK 2>&1
  ls -la ~/.cache/hark/cubin 2>&1
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>&1 | head -1
} > $OUT/cold.log 2>&1
{ echo "== bench whisper, shipped tuning at $(el) s"
  ./hark bench whisper --backend cuda -r 5 --model $W8 --audio $JFK 2>&1
  echo "== bench whisper, HARK_CUDA_TUNE=MatMulMMQ=1000000 at $(el) s"
  HARK_CUDA_TUNE=MatMulMMQ=1000000 ./hark bench whisper --backend cuda -r 5 --model $W8 --audio $JFK 2>&1
  for tune in "" "MatMulMMQ=1000000"; do
    echo "== profile (HARK_CUDA_PROFILE=1, -r 1) HARK_CUDA_TUNE=$tune at $(el) s"
    HARK_CUDA_TUNE=$tune HARK_CUDA_PROFILE=1 ./hark bench whisper --backend cuda -r 1 --model $W8 --audio $JFK 2>&1 | grep -iA14 'encode'
  done
} > $OUT/bench.log 2>&1
{ echo "== excerpt at $(el) s"
  for beam in 1 5; do for r in 1 2 3; do
    /usr/bin/time -f "transcribe --backend cuda --beam $beam excerpt, run $r: %e s wall" ./hark transcribe --backend cuda --model $W8 --beam $beam excerpt.wav > $OUT/ex-b$beam-$r.txt 2> err.txt; tail -1 err.txt
  done; done
  /usr/bin/time -f "greedy, HARK_CUDA_TUNE=MatMulMMQ=1000000: %e s wall" env HARK_CUDA_TUNE=MatMulMMQ=1000000 ./hark transcribe --backend cuda --model $W8 --beam 1 excerpt.wav > $OUT/ex-b1-nommq.txt 2> err.txt; tail -1 err.txt
  /usr/bin/time -f "greedy, HARK_CUDA_CUBIN_CACHE=off: %e s wall" env HARK_CUDA_CUBIN_CACHE=off ./hark transcribe --backend cuda --model $W8 --beam 1 excerpt.wav > /dev/null 2> err.txt; tail -1 err.txt
  for beam in 1 5; do
    /usr/bin/time -f "transcribe --backend cpu --beam $beam excerpt: %e s wall" ./hark transcribe --backend cpu --model $W8 --beam $beam excerpt.wav > $OUT/ex-cpu-b$beam.txt 2> err.txt; tail -1 err.txt
  done
  cd $OUT
  for beam in 1 5; do
    for r in 2 3; do cmp -s ex-b$beam-$r.txt ex-b$beam-1.txt || echo "beam $beam run $r differs from run 1"; done
    cmp -s ex-b$beam-1.txt ex-cpu-b$beam.txt && echo "beam $beam: CUDA and CPU print the same text" || { echo "beam $beam: CUDA and CPU differ:"; diff <(tr ' ' '\n' < ex-cpu-b$beam.txt) <(tr ' ' '\n' < ex-b$beam-1.txt) | head -12; }
    wc -w ex-b$beam-1.txt
  done
  cmp -s ex-b1-nommq.txt ex-cpu-b1.txt && echo "greedy MatMulMMQ=1000000: same text as the CPU" || { echo "greedy MatMulMMQ=1000000 differs from the CPU:"; diff <(tr ' ' '\n' < ex-cpu-b1.txt) <(tr ' ' '\n' < ex-b1-nommq.txt) | head -12; }
  tar -czf texts.tgz ex-*.txt && rm -f ex-*.txt
  cd $W
} > $OUT/excerpt.log 2>&1
export HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
{ echo "== TestCubinGuard on the checkout's cubins at $(el) s"; ./cuda.test -test.run '^TestCubinGuard$' -test.v 2>&1 | tail -2
  for mode in normal permuted poison; do
    E=$(modeenv $mode)
    echo "== msltest $mode ($E), device tuning, at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 100 ./msltest.test -test.run '^Test(E2EWhisperJFK|E2EStories)$' -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$mode.v.log | head -12
    G='^TestGPU(StoriesReplay)$'; [ $mode = normal ] && G='^TestGPU(StoriesReplay|SharedByTwoModels)$'
    echo "== cuda.test $mode at $(el) s"
    env $E timeout 100 ./cuda.test -test.run "$G" -test.v -test.count=1 > $OUT/cuda-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/cuda-$mode.v.log | head -12
  done
  echo "== TestE2EWhisperLongForm, device tuning, at $(el) s"
  HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout $(( 560 - $(el) )) ./msltest.test -test.run '^TestE2EWhisperLongForm$' -test.v -test.count=1 > $OUT/longform.v.log 2>&1; rc=$?; echo "exit $rc"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|beams [15]:|near-tie' $OUT/longform.v.log | cut -c1-300 | head -30
  if [ $rc != 0 ] && [ $(el) -lt 480 ]; then
    echo "== TestE2EWhisperLongForm/beams1, device tuning with MatMulMMQ=1000000, at $(el) s"
    HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 HARK_MSLTEST_TUNE=MatMulMMQ=1000000 timeout $(( 570 - $(el) )) ./msltest.test -test.run '^TestE2EWhisperLongForm$/^beams1$' -test.v -test.count=1 > $OUT/longform-nommq.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|beams [15]:|near-tie' $OUT/longform-nommq.v.log | cut -c1-300 | head -20
  fi
  echo "== done at $(el) s"
} > $OUT/tests.log 2>&1
(cd $OUT && tar -czf test-logs.tgz *.v.log && rm *.v.log)
cat $OUT/cold.log; grep -vE '^samples' $OUT/bench.log | head -80; cat $OUT/excerpt.log $OUT/tests.log
