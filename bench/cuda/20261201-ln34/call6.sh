#!/bin/bash
# ln34 (issue #34), call 6 (calls 1-5's machine: the model, jfk and main's hark staged): layer_norm reading its row
# once into registers (norm.metal's LN_REGS path; the same sums), the brief's second item. $K holds the branch's
# msltest.test.xz and hark-ln34b.xz (its base module JIT-compiled in the first process). msltest's TestNormKernels
# and TestE2EWhisperJFK (-short: greedy) through CUDA in normal, permuted-block and NaN-poisoned runs, and `hark bench
# whisper --backend cuda` alternated with main's hark; written to $OUT as it goes (the call is cut at the
# branch's last device seconds). Not run: the machine of calls 1-5 had gone back (30 minutes held), the call found a
# fresh one and stopped at the check below (rc 3). To run it: stage the kit model, jfk and main's hark in $W as
# calls 1-3 do, build with layer-norm-registers.patch applied and `go generate ./cuda`.
set -u
K=$(cd "${K:-.gpu/ln34}" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/ln34}; S=$(date +%s); mkdir -p $OUT
el() { echo $(( $(date +%s) - S )); }
L=$OUT/call6.log
[ -e $W/hark-main ] && [ -e $W/q8.bin ] || { echo "not call 5's machine"; exit 3; }
cd $W; for f in msltest.test hark-ln34b; do xz -dc $K/$f.xz > $f && chmod +x $f; done
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
B="bench whisper --backend cuda --model q8.bin --audio $W/jfk.wav --tokens 64 -r 3"
tests() {
  case $1 in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
  echo "== msltest $1 ($E) at $(el) s" >> $L
  env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 100 ./msltest.test -test.run '^Test(NormKernels|E2EWhisperJFK)$' -test.short -test.v -test.count=1 > $OUT/t.v.log 2>&1; echo "exit $?" >> $L
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|norm_test.go|beams 1: msltest on cuda' $OUT/t.v.log | cut -c1-200 >> $L
}
bench() {
  echo "=== round $1 at $(el) s" >> $L
  for v in main ln34b; do echo "== $v" >> $L; ./hark-$v $B 2>&1 | grep -E 'decode \(|samples decode' >> $L; done
}
tests normal; bench 1; tests permuted; tests poison; bench 2; bench 3
echo "== done at $(el) s" >> $L
cat $L
