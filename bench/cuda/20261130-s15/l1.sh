#!/bin/bash
# Lead's first call of the fifteenth session (2026-11-30, H200): (1) issue #34, branch fold34 merged again on main
# fe29910 (the attention output product folded into decode attention, RopeAttentionMatVec, on by default on CUDA):
# cuda's GPU tests and msltest through CUDA (the folded kernel, attention, golden tokens) in normal, permuted-block
# and NaN-poisoned runs, launches a token with graphs off, tg128 folded against HARK_CUDA_TUNE=AttnFoldO=1;
# (2) issue #34's 1B row: llama.cpp (the fork on whisper.cpp's ggml, build-peers.sh --cuda llama) built in this call,
# then Hark and llama-bench alternating on the same Llama-3.2-1B-shaped q8_0 and q4_0 files. The build runs in the
# background during the tests; every timing runs after it. $K holds hark.xz, cuda.test.xz, msltest.test.xz,
# data.tar.xz, peers-src.tar.xz, build-peers.sh.
set -u
K=${K:-.gpu/l1}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared && cd $W
export PATH=$PATH:/usr/local/cuda/bin
tar -xJf $K/peers-src.tar.xz
( bash $K/build-peers.sh build $W/src $W/pl --cuda llama > $OUT/build.log 2>&1; echo "build exit $? at $(el) s" >> $OUT/build.log ) &
B=$!
for b in hark cuda.test msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared; TOK=$W/shared/llm-kit/tokenizers/smollm2
{ nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader; nproc
  ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 4
  ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 4; ls -la $W/m; } > $OUT/write.log 2>&1
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
{ for mode in normal permuted poison; do
    E=$(modeenv $mode); G='^TestGPU(StoriesReplay|BatchEqualsSequential)$'
    [ $mode = normal ] && G='^TestGPU(Errors|CopyBandwidth|StoriesReplay|BatchEqualsSequential)$'
    echo "== cuda.test $mode ($E) at $(el) s"
    env $E timeout 150 ./cuda.test -test.run "$G" -test.v -test.count=1 > $OUT/cuda-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/cuda-$mode.v.log | head -20
    CH='RopeAttentionMatVec.*|RopeAttentionKernel|AttentionMergeChunks|AttentionKernel|E2EStories|Sample.*'
    echo "== msltest $mode ($E) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.short -test.run "^Test($CH)\$" -test.skip '^TestSampleExpFixedPoint$' -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$mode.v.log | grep -v -- '--- PASS' | head -20
    echo "passed: $(grep -c -- '--- PASS' $OUT/msltest-$mode.v.log)"
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
wait $B; tail -2 $OUT/build.log
LB=$W/pl/bin/llama-bench; M8=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf; B1=$W/m/llama-1b-shape-v1-L16
{ echo "== timed at $(el) s; $(cat /proc/loadavg)"
  echo "== launches a token, graphs off (q8_0), folded"; HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $M8 -r 1 --pp 0 --tg 128 2>&1 | grep -E 'cuda tg128'
  echo "== launches a token, graphs off (q8_0), AttnFoldO=1"; HARK_CUDA_TUNE=AttnFoldO=1 HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $M8 -r 1 --pp 0 --tg 128 2>&1 | grep -E 'cuda tg128'
  for r in 1 2; do
    echo "== SmolLM2 q8_0 tg128, folded, round $r at $(el) s"; ./hark bench llm --backend cuda --model $M8 -r 3 --pp 0 --tg 128 2>&1 | grep -vE '^  '
    echo "== SmolLM2 q8_0 tg128, AttnFoldO=1, round $r at $(el) s"; HARK_CUDA_TUNE=AttnFoldO=1 ./hark bench llm --backend cuda --model $M8 -r 3 --pp 0 --tg 128 2>&1 | grep -vE '^  '
  done
  for r in 1 2; do for f in q8_0 q4_0; do
    [ $(el) -lt 540 ] || { echo "SKIP $f round $r at $(el) s"; continue; }
    echo "== 1B $f hark, round $r at $(el) s"; ./hark bench llm --backend cuda --model $B1-$f.gguf -r 3 --pp 512 --tg 128 2>&1 | grep -vE '^  '
    echo "== 1B $f llama-bench, round $r at $(el) s"; [ -x $LB ] && $LB -m $B1-$f.gguf -ngl 99 -r 3 -p 512 -n 128 2>&1 | grep -E '^\|'
  done; done
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
[ -x $LB ] && { ldd $LB > $OUT/llama-bench-ldd.txt 2>&1; ls -la $LB >> $OUT/llama-bench-ldd.txt; xz -T16 -6 -c $LB > $OUT/llama-bench-cuda.xz; }
(cd $OUT && tar -czf test-logs.tgz *.v.log && rm *.v.log)
cat $OUT/write.log | tail -5; cat $OUT/tests.log $OUT/timed.log
