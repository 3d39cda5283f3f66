#!/bin/bash
# Session 29's lead call: the cubins rebuilt from main 1bc52a4's PTX (b38s28's native multi-row q8_0 mat-vec in the
# sm80 module; the base and sm90a modules unchanged), then on them: msltest through CUDA and cuda.test's
# TestGPUMatVecRows / TestGPUBatchEqualsSequential / TestCubin* in the normal, permuted and poisoned runs (their logs
# must say the kernels came from cubins, not the JIT), the 1B shape's tg128 (q8_0, q4_0) and the batch step at 1 / 4 /
# 16 rows. From the checkout's root: K=.gpu/lead29 bash bench/cuda/20261203-s29/call1.sh, $K holding ptxpdl.xz,
# hark.xz, cuda.test.xz, msltest.test.xz (main 1bc52a4, -tags hark_nocubin: cubins through HARK_CUDA_CUBIN_DIR) and
# data.tar.xz (stories260K's golden files, the SmolLM2 tokenizer). MODES=normal LEAN=1: the normal run only, no 1B
# tg128 (the short form, for a nearly spent device budget).
set -u
R=$(pwd); K=${K:-.gpu/lead29}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/lead29
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v
for f in ptxpdl hark cuda.test msltest.test; do xz -T4 -dc $K/$f.xz > $W/$f && chmod +x $W/$f; done
tar -C $W/shared -xJf $K/data.tar.xz
PTXPDL=$W/ptxpdl bash bench/cuda/cubins.sh > /dev/null 2>&1; echo "cubins: exit $? at $(el) s"
cp $OUT/cubins.log $OUT/cubins-log.txt 2>/dev/null; mkdir -p $W/cubin && cp $OUT/cubin/* $W/cubin/
tar -C $OUT -cf $OUT/cubin.tar cubin && rm -r $OUT/cubin
export HARK_CUDA_CUBIN_DIR=$W/cubin HARK_TESTDATA=$W/shared
cd $W
MT='^Test(MatVecQ8Activations|MatVecQ8PreQuantizedSame|RopeAttentionMatVecQ8Activations|MatVecAllTypes|FusedMatVecAllTypes|RepackedWeights|MatVecTuning|AttentionPagedAligned|AttentionPagedKernel|RopeKVPagedKernel|AttentionPagedSplit|E2EStories)$'
CT='^(TestGPUMatVecRows|TestGPUBatchEqualsSequential|TestCubin.*)$'
{ for m in ${MODES:-normal permuted poison}; do
    case $m in normal) E="X=1";; permuted) E="HARK_CUDA_PERMUTE=20261203";; poison) E="HARK_CUDA_POISON=1";; esac
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 90 ./msltest.test -test.run "$MT" -test.v -test.count=1 > v/msl-$m.v.log 2>&1
    echo "-- msltest $m ($E): exit $? at $(el) s, passed $(grep -c -- '--- PASS' v/msl-$m.v.log)"
    grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)|kernels from' v/msl-$m.v.log | sort | uniq -c | head -6
    env $E timeout 90 ./cuda.test -test.run "$CT" -test.v -test.count=1 > v/cuda-$m.v.log 2>&1
    echo "-- cuda.test $m ($E): exit $? at $(el) s, passed $(grep -c -- '--- PASS' v/cuda-$m.v.log)"
    grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)|kernels from' v/cuda-$m.v.log | sort | uniq -c | head -6
  done; } > $OUT/tests.log 2>&1
(cd v && tar -cf - *.v.log | xz -6 > $OUT/test-logs.tar.xz)
TOK=$W/shared/llm-kit/tokenizers/smollm2; B1=$W/m/llama-1b-shape-v1-L16; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
{ [ -n "${LEAN:-}" ] || ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
  ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
  echo "files written at $(el) s"
  [ -n "${LEAN:-}" ] || for r in 1 2; do for t in q8_0 q4_0; do
    echo "== 1B $t round $r at $(el) s"
    HARK_CUDA_STARTUP=1 ./hark bench llm --backend cuda --model $B1-$t.gguf -r 3 --pp 0 --tg 128 2>&1 | grep -E '^\| .*tg|^samples|rror|cubin|kernels'
  done; done
  echo "== batch step at $(el) s"
  HARK_BENCH_MODEL=$F HARK_BENCH_MATMUL_ROWS=17 timeout 60 ./cuda.test -test.run '^$' -test.bench GPUBatchStep -test.benchtime 256x 2>&1 | grep -E 'ms/step|FAIL|panic'
  echo "end at $(el) s"; } > $OUT/bench.log 2>&1
cat $OUT/cubins-log.txt $OUT/tests.log $OUT/bench.log
