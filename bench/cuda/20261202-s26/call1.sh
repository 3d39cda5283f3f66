#!/bin/bash
# Session 26's lead call: the cubins rebuilt from the merged PTX (b38's attention_paged_f16_a16 and rope_kv_paged,
# q34's quantize_q8x pre-pass and mat_vec_q8p), then msltest through CUDA on them (the branches' kernel tests and
# TestE2EStories, normal / permuted / poisoned), then tg128 of the merged tree. From the lead's checkout root:
# K=.gpu/lead bash bench/cuda/20261202-s26/call1.sh, $K holding ptxpdl.xz, hark.xz, msltest.test.xz (main ddf81e3,
# -tags hark_nocubin: they read the new cubins through HARK_CUDA_CUBIN_DIR) and data.tar.xz (stories260K, its
# golden file, the SmolLM2 tokenizer).
set -u
R=$(pwd); K=${K:-.gpu/lead}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/lead
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v
for f in ptxpdl hark msltest.test; do xz -T4 -dc $K/$f.xz > $W/$f && chmod +x $W/$f; done
tar -C $W/shared -xJf $K/data.tar.xz
PTXPDL=$W/ptxpdl bash bench/cuda/cubins.sh > /dev/null 2>&1; echo "cubins: exit $? at $(el) s"
cp $OUT/cubins.log $OUT/cubins-log.txt 2>/dev/null; tar -C $OUT -cf $OUT/cubin.tar cubin && rm -r $OUT/cubin
mkdir -p $W/cubin && tar -C $W -xf $OUT/cubin.tar && export HARK_CUDA_CUBIN_DIR=$W/cubin
cd $W
MT='^Test(MatVecQ8Activations|MatVecQ8PreQuantizedSame|RopeAttentionMatVecQ8Activations|MatVecAllTypes|FusedMatVecAllTypes|RepackedWeights|Aligned16Loads|MatVecTuning|AttentionPagedAligned|AttentionPagedKernel|RopeKVPagedKernel|PagedKernelsBadRow|AttentionPagedSplit|E2EBatchPagedSplit|LayerNormMatVec.*|E2EStories)$'
{ for m in normal permuted poison; do
    case $m in normal) E="X=1";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
    env $E HARK_TESTDATA=$W/shared HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 \
      timeout 120 ./msltest.test -test.run "$MT" -test.v -test.count=1 > v/msl-$m.v.log 2>&1
    echo "-- msltest $m ($E): exit $? at $(el) s, passed $(grep -c -- '--- PASS' v/msl-$m.v.log)"
    grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)|JIT|cubin' v/msl-$m.v.log | head -8
  done; } > $OUT/tests.log 2>&1
(cd v && tar -czf $OUT/test-logs.tgz *.v.log)
TOK=$W/shared/llm-kit/tokenizers/smollm2
{ ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
  ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
  echo "files written at $(el) s"
  for r in 1 2; do for f in $W/m/llama-1b-shape-v1-L16-q8_0.gguf $W/m/llama-1b-shape-v1-L16-q4_0.gguf $W/m/smollm2-135m-shape-v1-L30-q8_0.gguf; do
    [ $(el) -lt 230 ] || { echo "SKIP at $(el) s"; break 2; }
    echo "== $(basename $f) round $r at $(el) s"
    HARK_CUDA_STARTUP=1 ./hark bench llm --backend cuda --model $f -r 3 --pp 512 --tg 128 2>&1 | grep -E '^\| |^samples|ready|rror'
  done; done; echo "end at $(el) s"; } > $OUT/bench.log 2>&1
cat $OUT/cubins-log.txt $OUT/tests.log $OUT/bench.log
