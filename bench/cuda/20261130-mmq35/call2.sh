#!/bin/bash
# Second H200 call (branch mmq35): msltest's TestMatMulTensorCores through CUDA again (the first call's failed on its
# launch expectation: with MatMulMMQ the q8_0/q4_0 cases from 64 rows launch quantize_q8a first; the test now holds
# the float-activation products to MatMulMMQ = 0), BenchmarkGPUMatMul's q8_0/q4_0 rows (mma against mmq,
# 4096×4096×512), and pp16/pp32/pp64 of the 1B shape q8_0 with the int8 path from 16 rows against the default (64).
# Run from the repository root: K=.gpu/mmq35 bash .gpu/mmq35/call2.sh; $K holds hark.xz, cuda.test.xz,
# msltest.test.xz and data.tar.xz (as call.sh's).
set -u
K=${K:-.gpu/mmq35}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared && cd $W
for b in hark cuda.test msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared
( ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0 --tokenizer $W/shared/llm-kit/tokenizers/smollm2 --pp 8 --tg 0 -r 1 -t 8
  echo "written at $(el) s" ) > $OUT/write2.log 2>&1 &
WR=$!
{ echo "== msltest TestMatMulTensorCores (JIT first) at $(el) s"
  HARK_MSLTEST_DEVICE=cuda timeout 58 ./msltest.test -test.run '^TestMatMulTensorCores$' -test.v -test.count=1 > $OUT/msltest-mtc.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|mat_mul' $OUT/msltest-mtc.v.log | sed 's/.*test.go:[0-9]*: //' | head -30
  echo "== BenchmarkGPUMatMul at $(el) s"
  [ $(el) -lt 58 ] && timeout 8 ./cuda.test -test.run '^$' -test.bench 'GPUMatMul/q(8|4)_0/(mma|mmq)$' -test.benchtime 20x 2>&1 | grep -E 'Benchmark|ok'
  wait $WR; tail -1 $OUT/write2.log
  B1=$W/m/llama-1b-shape-v1-L16-q8_0.gguf
  for pp in 16 32 64; do for tune in default MatMulMMQ=16; do
    [ $(el) -lt 60 ] || { echo "SKIP pp$pp $tune at $(el) s"; continue; }
    E=""; [ $tune = default ] || E="HARK_CUDA_TUNE=$tune"
    echo "== 1B q8_0 pp$pp $tune at $(el) s"
    env $E ./hark bench llm --backend cuda --model $B1 -r 3 --pp $pp --tg 0 2>&1 | grep -E '^\| llama|^samples'
  done; done
  echo "== done at $(el) s"; } > $OUT/call2.log 2>&1
cat $OUT/call2.log
