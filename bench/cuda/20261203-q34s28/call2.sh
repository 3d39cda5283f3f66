#!/bin/bash
# Issue #34 round 19, call 2 (helper q34s28; prepared, not run: the helper's device cap was spent on call 1): the
# branch's binary (MatVecQ8GroupsPre=4, the cuda family's new default) against round 18's cap
# (HARK_CUDA_TUNE=MatVecQ8GroupsPre=2), the 1B shape's tg128 q8_0 and q4_0 in 4 alternated rounds, the SmolLM2
# shape's q8_0 once each (no product 2048 wide: unchanged), then msltest through CUDA with the device's tuning in the
# normal / permuted / poisoned runs (the capped case now caps MatVecQ8GroupsPre too). Main's committed cubins (the
# branch changes no kernel). ~60 s of script. From the lead's checkout root: K=.gpu/q34s28/c2 bash $K/call2.sh, $K
# holding hark.xz and msltest.test.xz (the branch, -tags hark_nocubin), cub/ (main's sm_90 cubins and SOURCE) and
# data.tar.xz (stories260K, its golden files, the SmolLM2 tokenizer).
set -u
R=$(pwd); K=${K:-.gpu/q34s28/c2}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/q34s28b
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v
for f in hark msltest.test; do xz -T4 -dc $K/$f.xz > $W/$f && chmod +x $W/$f; done
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_CUDA_CUBIN_DIR=$K/cub HARK_TESTDATA=$W/shared
cd $W
TOK=$W/shared/llm-kit/tokenizers/smollm2; B1=$W/m/llama-1b-shape-v1-L16; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
{ ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
  ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
  echo "files written at $(el) s"
  HARK_CUDA_STARTUP=1 ./hark bench llm --backend cuda --model $B1-q8_0.gguf -r 1 --pp 0 --tg 8 2>&1 | grep -E 'ready|rror|cubin|JIT'
  for r in 1 2 3 4; do for t in q8_0 q4_0; do L="old new"; [ $((r % 2)) = 0 ] && L="new old"; for c in $L; do
    v=; [ $c = old ] && v=MatVecQ8GroupsPre=2
    echo "== 1B $t $c r$r at $(el) s"
    HARK_CUDA_TUNE=$v ./hark bench llm --backend cuda --model $B1-$t.gguf -r 5 --pp 0 --tg 128 2>&1 | grep -E '^\| .*tg|^samples|rror'
  done; done; done
  for c in old new; do v=; [ $c = old ] && v=MatVecQ8GroupsPre=2
    echo "== smollm2 q8_0 $c at $(el) s"
    HARK_CUDA_TUNE=$v ./hark bench llm --backend cuda --model $F -r 5 --pp 0 --tg 128 2>&1 | grep -E '^\| .*tg|rror'
  done; echo "bench end at $(el) s"; } > $OUT/bench.log 2>&1
MT='^Test(MatVecQ8Activations|MatVecQ8PreQuantizedSame|RopeAttentionMatVecQ8Activations|MatVecTuning|MatVecAllTypes|FusedMatVecAllTypes|RepackedWeights|E2EStories)$'
{ for m in normal permuted poison; do
    case $m in normal) E="X=1";; permuted) E="HARK_CUDA_PERMUTE=20261203";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "$m 1B q8_0 md5 new $(env $E ./hark generate --backend cuda --model $B1-q8_0.gguf --temp 0 --ignore-eos -n 64 'The quick brown fox' 2>/dev/null | md5sum | cut -c1-12) old $(env $E HARK_CUDA_TUNE=MatVecQ8GroupsPre=2 ./hark generate --backend cuda --model $B1-q8_0.gguf --temp 0 --ignore-eos -n 64 'The quick brown fox' 2>/dev/null | md5sum | cut -c1-12)"
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 90 ./msltest.test -test.run "$MT" -test.v -test.count=1 > v/msl-$m.v.log 2>&1
    echo "-- msltest $m ($E): exit $? at $(el) s, passed $(grep -c -- '--- PASS' v/msl-$m.v.log)"
    grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)|JIT|cubin' v/msl-$m.v.log | head -8
  done; } > $OUT/tests.log 2>&1
(cd v && tar -cf - *.v.log | xz -9 > $OUT/test-logs.tar.xz)
awk '/^== /{n=$2" "$3" "$4} /tg128 \|/{split($0,a,"|"); split(a[8],b,"±"); k=n; c[k]++; s[k]+=b[1]} END{for(k in c) printf "%s %d %.1f\n", k, c[k], s[k]/c[k]}' $OUT/bench.log | sort > $OUT/summary.txt
grep -E 'cubin|JIT|end' $OUT/bench.log; echo "model type cap rounds mean"; cat $OUT/summary.txt; cat $OUT/tests.log
