#!/bin/bash
# launch34, call 1 (issue #34, 2026-12-01, H200): the output product folded into decode attention by slices of Wo's
# rows (rope_attention_mat_vec over (AttnFoldSlices, nHead) threadgroups; the cuda family folds by default, 8
# slices). Binaries of branch launch34 built with -tags hark_nocubin: the base module's PTX differs from main's cubins,
# so the first process JIT-compiles it (the driver's cache serves the later ones); the sm80/sm90a modules are main's
# cubins. Order, most needed first, with a time guard: (1) stories260K by `hark generate` on CUDA (graphs and chaining,
# the shipped path) against the CPU, greedy and sampled (normal; it pays the JIT);
# (2) launches a token with graphs off; SmolLM2-shape tg128, the fold (default) against HARK_CUDA_TUNE=AttnFoldO=1 (the
# two launches of main: the same kernels, rope_attention_group_f16_a16 and rope_attention_mat_vec_o_*), alternating;
# (3) msltest through CUDA and the generate check in normal, permuted-block and NaN-poisoned runs; (4) other slice
# counts. cuda.test (TestGPUStoriesReplay) did not fit the transfer beside the rest (~18 MiB beside the checkout).
# $K holds hark.xz, msltest.test.xz, data.tar.xz (stories260K.gguf, the smollm2 tokenizer).
set -u
K=${K:-.gpu/launch34}; K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/l34
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared && cd $W
for b in hark msltest.test; do ( xz -dc $K/$b.xz > $b && chmod +x $b ) & done
tar -C $W/shared -xJf $K/data.tar.xz; wait
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin; TOK=$W/shared/llm-kit/tokenizers/smollm2
( ./hark bench llm --backend cpu --dir $W/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 12 > $OUT/write.log 2>&1; echo "written at $(el) s" >> $OUT/write.log ) &
WR=$!
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261201";; poison) echo "HARK_CUDA_POISON=1";; esac; }
ST=$W/shared/models/stories260K.gguf
gen() { ./hark generate --backend $1 --model $ST --temp 0 -n 200 --ignore-eos "Once upon a time" > $OUT/gen-$2-greedy.txt 2>$OUT/gen-$2-greedy.err
  ./hark generate --backend $1 --model $ST --temp 0.8 --seed 42 -n 100 --ignore-eos "Lily" > $OUT/gen-$2-sampled.txt 2>$OUT/gen-$2-sampled.err; }
cudatest() { E=$(modeenv $1); echo "== hark generate stories260K, cuda $1 ($E) against the cpu, at $(el) s"
  env $E bash -c "$(declare -f gen); OUT=$OUT ST=$ST gen cuda $1"; echo "exit $?"
  for k in greedy sampled; do cmp -s $OUT/gen-cpu-$k.txt $OUT/gen-$1-$k.txt && echo "$k: CUDA $1 equals the CPU ($(wc -c < $OUT/gen-cpu-$k.txt) bytes)" || { echo "$k: CUDA $1 DIFFERS"; head -c 300 $OUT/gen-$1-$k.txt; tail -3 $OUT/gen-$1-$k.err; }; done; }
msltest() { E=$(modeenv $1); echo "== msltest $1 ($E) at $(el) s"
  env $E HARK_MSLTEST_DEVICE=cuda timeout 100 ./msltest.test -test.short -test.run '^Test(RopeAttentionMatVecKernel|E2EStories|RopeAttentionKernel)$' -test.v -test.count=1 > $OUT/msltest-$1.v.log 2>&1; echo "exit $?"
  grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$1.v.log | head -12; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; gen cpu cpu; cudatest normal; } > $OUT/tests.log 2>&1
wait $WR
M=$W/m/smollm2-135m-shape-v1-L30
tg() { echo "== $1 $2 at $(el) s"; env $2 ./hark bench llm --backend cuda --model $M-$1.gguf -r 5 --pp 0 --tg 128 2>&1 | grep -E 'tg128|samples'; }
{ echo "== timed at $(el) s; $(cat /proc/loadavg)"
  echo "== launches a token, graphs off (q8_0), fold"; HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $M-q8_0.gguf -r 1 --pp 0 --tg 128 2>&1 | grep -E 'cuda tg128'
  for f in q8_0 q4_0 f16; do tg $f X=1; tg $f HARK_CUDA_TUNE=AttnFoldO=1; done
  echo "== timed part 1 done at $(el) s"; } > $OUT/timed.log 2>&1
{ msltest normal; for mode in permuted poison; do [ $(el) -lt 85 ] || { echo "SKIP $mode at $(el) s"; continue; }; cudatest $mode; msltest $mode; done
  echo "== tests done at $(el) s"; } >> $OUT/tests.log 2>&1
{ [ $(el) -lt 80 ] && { tg q8_0 HARK_CUDA_TUNE=AttnFoldO=1; tg q8_0 X=1; }
  [ $(el) -lt 82 ] && tg q8_0 HARK_CUDA_TUNE=AttnFoldSlices=1
  [ $(el) -lt 84 ] && tg q8_0 HARK_CUDA_TUNE=AttnFoldSlices=16
  echo "== done at $(el) s"; } >> $OUT/timed.log 2>&1
(cd $OUT && tar -czf test-logs.tgz *.v.log gen-* && rm *.v.log gen-*)
tail -3 $OUT/write.log; cat $OUT/tests.log $OUT/timed.log
