#!/bin/bash
# Issue #35's int8 tensor-core GEMM (branch mmq35), one H200 call: the GPU tests (msltest's TestMatMulInt8 and the
# tensor-core and stories260K end-to-end tests through CUDA; normal, permuted-block, NaN-poisoned; cuda.test's
# TestGPUStoriesReplay did not fit the transfer beside the two hark binaries)
# beside the two JITs (hark0 = main b7807e0, hark = this branch) and the model writes, then pp512 of the SmolLM2 and
# Llama-3.2-1B shapes, q8_0 and q4_0, hark0 and hark alternating, then one profiled run of each on the 1B files.
# Run from the repository root: K=.gpu/mmq35 bash .gpu/mmq35/call.sh; $K holds hark.xz, hark0.xz,
# msltest.test.xz and data.tar.xz (llm-kit/tokenizers/smollm2, llm-kit/golden/stories260K.golden.json,
# models/stories260K.gguf).
set -u
K=${K:-.gpu/mmq35}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared && cd $W
for b in hark hark0 msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared
TOK=$W/shared/llm-kit/tokenizers/smollm2
# hark0's JIT and the model writes, beside the tests (whose first run JITs this branch's PTX)
( ./hark0 bench llm --backend cuda --model $W/shared/models/stories260K.gguf -r 1 --pp 8 --tg 8 > $OUT/jit0.log 2>&1
  echo "hark0 jit done at $(el) s" >> $OUT/jit0.log ) &
J=$!
( ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 4
  ./hark bench llm --backend cpu --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 4; ls -la $W/m
  echo "written at $(el) s" ) > $OUT/write.log 2>&1 &
WR=$!
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
# msltest (its first run JITs this branch's PTX)
{ for mode in normal permuted poison; do
    E=$(modeenv $mode); R='MatMulInt8|E2EStories'; [ $mode = normal ] && R="$R|MatMulTensorCores"
    echo "== msltest $mode ($E) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.short -test.run "^Test($R)\$" -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$mode.v.log | head -30
    grep -E 'mat_mul_(mmq|q8a)' $OUT/msltest-$mode.v.log | sed 's/.*test.go:[0-9]*: //' | head -40
    [ $mode = normal ] && { touch $OUT/jit1; }
  done; echo "== msltest done at $(el) s"; } > $OUT/tests-msl.log 2>&1 &
M=$!
wait $M; rm -f $OUT/jit1
wait $J $WR
cat $OUT/jit0.log | grep -v '^  '; tail -3 $OUT/write.log
S8=$W/m/smollm2-135m-shape-v1-L30; B1=$W/m/llama-1b-shape-v1-L16
{ echo "== timed at $(el) s; $(cat /proc/loadavg)"; nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  for r in 1 2; do for f in $B1-q8_0 $B1-q4_0 $S8-q8_0 $S8-q4_0; do
    [ $r = 2 ] && [ $f = $S8-q8_0 -o $f = $S8-q4_0 ] && continue
    for h in hark0 hark; do
      [ $(el) -lt 150 ] || { echo "SKIP $h $f round $r at $(el) s"; continue; }
      echo "== $h $(basename $f) pp512, round $r at $(el) s"
      ./$h bench llm --backend cuda --model $f.gguf -r 3 --pp 512 --tg 0 2>&1 | grep -E '^\||^samples'
    done
  done; done
  for p in "hark $B1-q8_0" "hark0 $B1-q8_0" "hark $B1-q4_0" "hark $S8-q8_0"; do set -- $p
    [ $(el) -lt 160 ] || continue
    echo "== $1 $(basename $2) pp512 profiled at $(el) s"
    HARK_CUDA_PROFILE=1 ./$1 bench llm --backend cuda --model $2.gguf -r 1 --pp 512 --tg 0 2>&1 | grep -E 'profile|^  |^\|' | head -12
  done
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
(cd $OUT && tar -czf test-logs.tgz *.v.log && rm *.v.log)
cat $OUT/tests-msl.log $OUT/timed.log
