#!/bin/bash
# Session 27's lead call: the cubins rebuilt from the merged PTX (q34s27's PDL markers in mat_vec_q8p and its
# pre-pass; b38s27 changed no kernel), msltest through CUDA on them (normal / permuted / poisoned), tg128 of the 1B
# shape on the old cubins (main 2fdb9c0's, their SOURCE given the new PTX's hash: the host code is the same, so the
# one binary runs main's kernels) against the new ones, alternated, then b38s27's c3: the long prompt beside 4
# streams with `hark bench serve --per-token`, main's scheduling (HARK_BATCH_PROMPT_BESIDE=0 HARK_CUDA_PAGED_SPLIT=0)
# and the merged tree's. From the checkout's root: K=.gpu/lead bash bench/cuda/20261203-s27/call1.sh, $K holding
# ptxpdl.xz, hark.xz, msltest.test.xz (main 1373f63, -tags hark_nocubin: they read cubins through
# HARK_CUDA_CUBIN_DIR) and data.tar.xz (stories260K's golden files, the SmolLM2 tokenizer).
set -u
R=$(pwd); K=${K:-.gpu/lead}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/lead
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v $W/old $W/models
for f in ptxpdl hark msltest.test; do xz -T4 -dc $K/$f.xz > $W/$f && chmod +x $W/$f; done
tar -C $W/shared -xJf $K/data.tar.xz
PTXPDL=$W/ptxpdl bash bench/cuda/cubins.sh > /dev/null 2>&1; echo "cubins: exit $? at $(el) s"
cp $OUT/cubins.log $OUT/cubins-log.txt 2>/dev/null; tar -C $OUT -cf $OUT/cubin.tar cubin && rm -r $OUT/cubin
mkdir -p $W/cubin && tar -C $W -xf $OUT/cubin.tar
NEWK=$(sha256sum cuda/kernels.ptx.gz | cut -d' ' -f1)
cp cuda/cubin/*.xz $W/old/ && sed "s/^kernels [0-9a-f]*/kernels $NEWK/" cuda/cubin/SOURCE > $W/old/SOURCE
export HARK_CUDA_CUBIN_DIR=$W/cubin HARK_TESTDATA=$W/shared
cd $W
MT='^Test(MatVecQ8Activations|MatVecQ8PreQuantizedSame|RopeAttentionMatVecQ8Activations|MatVecAllTypes|FusedMatVecAllTypes|RepackedWeights|MatVecTuning|AttentionPagedAligned|AttentionPagedKernel|RopeKVPagedKernel|AttentionPagedSplit|E2EStories)$'
{ for m in normal permuted poison; do
    case $m in normal) E="X=1";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 \
      timeout 60 ./msltest.test -test.run "$MT" -test.v -test.count=1 > v/msl-$m.v.log 2>&1
    echo "-- msltest $m ($E): exit $? at $(el) s, passed $(grep -c -- '--- PASS' v/msl-$m.v.log)"
    grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)|JIT|cubin' v/msl-$m.v.log | head -8
  done; } > $OUT/tests.log 2>&1
(cd v && tar -czf $OUT/test-logs.tgz *.v.log)
TOK=$W/shared/llm-kit/tokenizers/smollm2; B1=$W/m/llama-1b-shape-v1-L16; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
{ ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
  ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
  echo "files written at $(el) s"
  for r in 1 2; do for t in q8_0 q4_0; do L="old new"; [ $r = 2 ] && L="new old"; for c in $L; do
    [ $(el) -lt 200 ] || { echo "SKIP at $(el) s"; break 3; }
    echo "== 1B $t cubins $c round $r at $(el) s"
    HARK_CUDA_CUBIN_DIR=$W/$([ $c = old ] && echo old || echo cubin) ./hark bench llm --backend cuda --model $B1-$t.gguf -r 3 --pp 0 --tg 128 2>&1 | grep -E '^\| .*tg|^samples|rror|cubin'
  done; done; done; echo "end at $(el) s"; } > $OUT/bench.log 2>&1
ln -sf $F models/smollm2-shape-q8_0.gguf
serve() { # $1: name, $2: port; env in $E
  echo "== $1 ($E) at $(el) s"
  env $E HARK_BATCH_TRACE=$W/v/trace-$1.log ./hark serve --models-dir $W/models --backend cuda --batch-gpu --ctx 8192 --stream-interval 0 --timeout 5m --addr 127.0.0.1:$2 > $W/v/serve-$1.log 2>&1 &
  local P=$!
  for i in $(seq 600); do (echo > /dev/tcp/127.0.0.1/$2) 2>/dev/null && break; sleep 0.2; done
  timeout 60 ./hark bench serve --url http://127.0.0.1:$2 --model smollm2-shape-q8_0 --per-token --token-trace $W/v/tokens-$1.log --concurrency 4,4 --prompt-tokens 128 --max-tokens 128 --temperature 0.7 --long-prompt 4000 --long-after 16 2>&1
  kill $P; wait $P; }
{ E="HARK_BATCH_PROMPT_BESIDE=0 HARK_CUDA_PAGED_SPLIT=0" serve main 18601
  E="X=1" serve merged1 18602
  E="HARK_BATCH_PROMPT_BESIDE=0 HARK_CUDA_PAGED_SPLIT=0" serve main2 18603
  E="X=1" serve merged2 18604
  echo "== done at $(el) s"; } > $OUT/serve.log 2>&1
(cd $W/v && tar -cf - trace-*.log tokens-*.log | xz -9 > $OUT/traces.tar.xz)
cat $OUT/cubins-log.txt $OUT/tests.log $OUT/bench.log; grep -v "^$" $OUT/serve.log | grep "==\||\|sent at" | grep -v -- "---"
