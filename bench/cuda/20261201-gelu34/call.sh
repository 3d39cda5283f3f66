#!/bin/bash
# The lead's GPU check of branch gelu34 (issue #34: GELU in the decoder step's up product, 51 -> 47 launches a
# token). Build from the branch (after `go generate ./engine/plan && go generate ./cuda`; cuda/cubin not rebuilt):
#   CGO_ENABLED=0 go test -c -trimpath -ldflags='-s -w' -tags hark_nocubin -o msltest.test ./shaders/msltest
#   CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -tags hark_nocubin -o hark .
# xz them into $K as msltest.test.xz and hark-gelu34.xz (and main's hark as hark-main.xz, optional: then each
# round runs main beside the branch). The kit model q8.bin and shared/ (jfk.wav, the test data) staged in $W.
# The branch's PTX differs from main's cubins: the first process JIT-compiles (30-90 s), later ones hit the cache.
# Runs: the changed kernels' msltest tests and TestE2EWhisperJFK through CUDA in normal, permuted and poisoned
# runs; `hark bench whisper --backend cuda` 2 rounds (decoder ms/token); one graphs-off profile (launch list).
set -u
K=$(cd "${K:-.gpu/gelu34}" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/s18}; S=$(date +%s); mkdir -p $OUT
el() { echo $(( $(date +%s) - S )); }
[ -e $W/q8.bin ] || { echo "no staged model in $W"; exit 3; }
V=gelu34
cd $W && for f in msltest.test hark-gelu34 hark-main; do
  [ -e $K/$f.xz ] && xz -dc $K/$f.xz > $f && chmod +x $f && [ $f = hark-main ] && V="main gelu34"
done
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
T='^Test(MatVecGELUOut|MatVecAllTypes|FusedMatVecAllTypes|MatVecQ8Activations|RepackedWeights|RopeAttentionMatVecKernel|E2EWhisperJFK)$'
for mode in normal permuted poison; do
  case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
  echo "== msltest $mode ($E) at $(el) s"
  env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 200 ./msltest.test -test.run "$T" -test.short -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)' $OUT/msltest-$mode.v.log | grep -v -- '--- PASS' | head; echo "passed: $(grep -c -- '--- PASS' $OUT/msltest-$mode.v.log)"
done
B="bench whisper --backend cuda --model q8.bin --audio shared/audio/jfk.wav --tokens 64 -r 3"
for r in 1 2; do for b in $V; do echo "== round $r $b at $(el) s"; ./hark-$b $B 2>&1 | grep -E 'decode \(|encode \(|samples decode'; done; done | tee $OUT/bench.log
HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 ./hark-gelu34 $B > $OUT/profile.log 2>&1
grep -A16 'decode profile' $OUT/profile.log; echo "done at $(el) s"
