#!/bin/bash
# Lead's final check of the fifteenth session's merged main (H200, a fresh machine), from the repository root:
# (1) cuda/cubin made by bench/cuda/cubins.sh from this checkout's PTX (no GPU process before it ends);
# (2) issue #36's cold start: the first GPU process of the machine, `hark transcribe --backend cuda` of jfk.wav with the
#     committed speechkit q8_0 model, loading those cubins (HARK_CUDA_CUBIN_DIR, HARK_CUDA_STARTUP=1), then again;
# (3) TestCubinGuard on the new cubins, cuda's GPU tests and msltest through CUDA (the session's new and changed
#     kernels) in normal, permuted-block and NaN-poisoned runs, on the cubins;
# (4) the int8 encoder (mmq35) on a real model: the speechkit passage transcribed on CUDA and on the CPU;
# (5) timings: the 1B shape's tg128 with mv34's 8-bit-activation mat-vec and without (MatVecQ8K=1000000), pp512
#     (mmq35), the SmolLM2 shape, launches a token. $K holds hark.xz, cuda.test.xz, msltest.test.xz, data.tar.xz.
set -u
K=${K:-.gpu/z1}; K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared
OUT=$OUT bash bench/cuda/cubins.sh > /dev/null 2>&1 &
CB=$!
cd $W
for b in hark cuda.test msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C $W/shared -xJf $K/data.tar.xz
wait $CB; echo "cubins done at $(el) s" >> $OUT/cubins.log
export HARK_CUDA_CUBIN_DIR=$OUT/cubin HARK_TESTDATA=$W/shared
SK=$R/testdata/speechkit/ggml-speechkit-q8_0.bin
{ echo "== cold start at $(el) s: the machine's first GPU process"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1
  for i in 1 2; do
    /usr/bin/time -f "wall %e s, max RSS %M KB" env HARK_CUDA_STARTUP=1 ./hark transcribe --backend cuda --beam 1 --model $SK shared/audio/jfk.wav 2>&1
  done
  echo "== TestCubinGuard on the new cubins"; ./cuda.test -test.run '^TestCubinGuard$' -test.v 2>&1 | tail -3; } > $OUT/cold.log 2>&1
TOK=$W/shared/llm-kit/tokenizers/smollm2
{ ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8
  ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8; ls -la $W/m
  echo "== cpu greedy passage at $(el) s"; /usr/bin/time -f "wall %e s" ./hark transcribe --backend cpu --threads 6 --beam 1 --model $SK $R/testdata/speechkit/passage.flac > $OUT/passage-cpu.txt 2>$OUT/passage-cpu.err; tail -1 $OUT/passage-cpu.err; } > $OUT/write.log 2>&1 &
WR=$!
modeenv() { case $1 in normal) echo "";; permuted) echo "HARK_CUDA_PERMUTE=20261130";; poison) echo "HARK_CUDA_POISON=1";; esac; }
{ for mode in normal permuted poison; do
    E=$(modeenv $mode); G='^TestGPU(StoriesReplay|BatchEqualsSequential)$'
    [ $mode = normal ] && G='^TestGPU(Errors|StoriesReplay|BatchEqualsSequential)$'
    echo "== cuda.test $mode ($E) at $(el) s"
    env $E timeout 120 ./cuda.test -test.run "$G" -test.v -test.count=1 > $OUT/cuda-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/cuda-$mode.v.log | grep -v -- '--- PASS' | head -20
    echo "passed: $(grep -c -- '--- PASS' $OUT/cuda-$mode.v.log)"
    CH='MatVecQ8Activations|MatMulInt8|MatMulTensorCores|FusedMatVecAllTypes|AttentionPagedKernel|RopeKVPagedKernel|PagedKernelsBadRow|WhisperTrackKernel|WhisperFilterKernel|RopeAttentionMatVecKernel|AttentionMergeChunks|E2EStories|Sample.*'
    echo "== msltest $mode ($E) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda timeout 150 ./msltest.test -test.short -test.run "^Test($CH)\$" -test.skip '^TestSampleExpFixedPoint$' -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual' $OUT/msltest-$mode.v.log | grep -v -- '--- PASS' | head -20
    echo "passed: $(grep -c -- '--- PASS' $OUT/msltest-$mode.v.log)"
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
{ echo "== speechkit passage, cuda greedy at $(el) s"; /usr/bin/time -f "wall %e s" ./hark transcribe --backend cuda --beam 1 --model $SK $R/testdata/speechkit/passage.flac > $OUT/passage-cuda.txt 2>$OUT/passage-cuda.err; tail -1 $OUT/passage-cuda.err
  echo "== cuda beam 5"; /usr/bin/time -f "wall %e s" ./hark transcribe --backend cuda --model $SK $R/testdata/speechkit/passage.flac > $OUT/passage-cuda-b5.txt 2>$OUT/passage-cuda-b5.err; tail -1 $OUT/passage-cuda-b5.err
  wait $WR; echo "== cpu greedy (run beside the tests; the CPU quantizes activations for q8_0 weights too)"; tail -1 $OUT/passage-cpu.err
  python3 - $OUT/passage-cuda.txt $OUT/passage-cpu.txt $OUT/passage-cuda-b5.txt <<'PY'
import sys
def words(p): return open(p).read().split()
def wer(a,b):
    d=list(range(len(b)+1))
    for i,x in enumerate(a,1):
        p,d[0]=d[0],i
        for j,y in enumerate(b,1):
            p,d[j]=d[j],min(d[j]+1,d[j-1]+1,p+(x!=y))
    return d[len(b)]/max(1,len(b))
c,k,b=(words(p) for p in sys.argv[1:4])
print("words: cuda %d cpu %d cuda-beam5 %d; WER cuda vs cpu (greedy) %.4f; identical %s"%(len(c),len(k),len(b),wer(c,k),c==k))
PY
} > $OUT/passage.log 2>&1
M8=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf; B1=$W/m/llama-1b-shape-v1-L16
{ echo "== timed at $(el) s; $(cat /proc/loadavg)"
  for r in 1 2; do for f in q8_0 q4_0; do
    [ $(el) -lt 500 ] || { echo "SKIP"; continue; }
    echo "== 1B $f tg128 8-bit activations (default), round $r at $(el) s"; ./hark bench llm --backend cuda --model $B1-$f.gguf -r 3 --pp 0 --tg 128 2>&1 | grep -E '^\| llama|^samples'
    echo "== 1B $f tg128 MatVecQ8K=1000000 (float activations), round $r at $(el) s"; HARK_CUDA_TUNE=MatVecQ8K=1000000 ./hark bench llm --backend cuda --model $B1-$f.gguf -r 3 --pp 0 --tg 128 2>&1 | grep -E '^\| llama|^samples'
  done; done
  for f in q8_0 q4_0; do echo "== 1B $f pp512 at $(el) s"; ./hark bench llm --backend cuda --model $B1-$f.gguf -r 3 --pp 512 --tg 0 2>&1 | grep -E '^\| llama|^samples'; done
  echo "== SmolLM2 q8_0 pp512 tg128 at $(el) s"; ./hark bench llm --backend cuda --model $M8 -r 3 --pp 512 --tg 128 2>&1 | grep -E '^\| llama|^samples|copy'
  echo "== launches a token, graphs off (q8_0)"; HARK_CUDA_GRAPHS=0 ./hark bench llm --backend cuda --model $M8 -r 1 --pp 0 --tg 128 2>&1 | grep -E 'cuda tg128'
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
(cd $OUT && tar -czf test-logs.tgz *.v.log && rm *.v.log)
cat $OUT/cubins.log $OUT/cold.log $OUT/tests.log $OUT/passage.log; grep -vE '^samples' $OUT/timed.log
