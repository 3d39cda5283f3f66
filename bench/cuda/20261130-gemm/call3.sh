#!/bin/bash
# GPU call 3 for issue #35 round 4 (branch gemm): call1.sh on mat_mul_big v2 (activations also by cp.async, f32, in a
# 4-step ring, converted to f16 once per block a step ahead of the products, one barrier a step; 112-128 KB of
# dynamic shared memory by opt-in). The msl variant of the GEMM benchmark is left out (call 1 has it). Run from the
# repository root as K=.gpu/gemm bash .gpu/gemm/call3.sh, $K holding hark.xz, cuda.test.xz, msltest.test.xz,
# data.tar.xz, sm80.ptx.xz and (optional) wq8.xz.
set -u
K=${K:-.gpu/gemm}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in hark cuda.test msltest.test sm80.ptx; do xz -dc $K/$b.xz > $b; done; chmod +x hark cuda.test msltest.test
tar -C /w/shared -xJf $K/data.tar.xz
[ -f $K/wq8.xz ] && xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared PATH=$PATH:/usr/local/cuda/bin
TOK=/w/shared/llm-kit/tokenizers/smollm2
( ./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8; ls -la /w/m ) > $OUT/write.log 2>&1 &
W=$!
{ nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.sm,clocks.mem --format=csv
  echo "== ptxas -v sm_90 at $(el) s"; ptxas --version | tail -1
  ptxas -arch=sm_90 -v -o /dev/null sm80.ptx > $OUT/ptxas.log 2>&1; grep -A3 -E "entry function 'hark_mat_mul_(big|mma_f16)" $OUT/ptxas.log
  echo "== GEMM 4096x4096x512 at $(el) s"; timeout 120 ./cuda.test -test.run XXX -test.bench 'GPUMatMul/f16/(mma|big)' -test.benchtime 10x 2>&1 | grep -E 'Benchmark|ok|FAIL|panic'
  echo "== torch.mm bf16 at $(el) s"; PYTHONUNBUFFERED=1 timeout 90 python3 -c '
import torch
def bench(m, n, k, it=50):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16); b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(5): torch.mm(a, b)
    torch.cuda.synchronize(); s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(it): torch.mm(a, b)
    e.record(); torch.cuda.synchronize(); ms = s.elapsed_time(e) / it
    print(f"torch.mm bf16 m={m} n={n} k={k}: {ms:.4f} ms, {2*m*n*k/ms/1e9:.1f} TFLOP/s")
bench(8192, 8192, 8192); bench(512, 4096, 4096, 200)' 2>&1
} > $OUT/gemm.log 2>&1
cat $OUT/gemm.log
CH='MatMulBigTensorCores|MatMulTensorCores|E2EStories'
{ for mode in normal permuted poison; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261130";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== msltest $mode ($E) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_TUNE=MatMulMMA=16,AttnMMA=1,MatMulBig=1 timeout 100 ./msltest.test -test.run "^Test($CH)\$" -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(--- |ok|FAIL|PASS|panic)|Error|expected|actual|mat_mul_big' $OUT/msltest-$mode.v.log | head -30
  done
  echo "== cuda.test TestGPUStoriesReplay at $(el) s"; timeout 60 ./cuda.test -test.run '^TestGPUStoriesReplay$' -test.count=1 2>&1 | tail -3
  echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
(cd $OUT && tar -czf msltest-logs.tgz msltest-*.v.log && rm msltest-*.v.log)
cat $OUT/tests.log
wait $W
M=/w/m/smollm2-135m-shape-v1-L30
{ for f in q8_0 q4_0 f16; do echo "== hark $f pp512 at $(el) s"; ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 512 --tg 0 2>&1; done
  echo "== f16 pp512 MatMulBig=1000000 (no big tiles) at $(el) s"; HARK_CUDA_TUNE=MatMulBig=1000000 ./hark bench llm --backend cuda --model $M-f16.gguf -r 5 --pp 512 --tg 0 2>&1 | grep pp512
  if [ -f shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin ]; then echo "== whisper at $(el) s"; ./hark bench whisper --backend cuda -r 5 2>&1; fi
  echo "== f16 pp2048 at $(el) s"; timeout 40 ./hark bench llm --backend cuda --model $M-f16.gguf -r 2 --pp 2048 --tg 0 2>&1 | grep -E 'pp2048|scratch|batch'
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
grep -vE '^(samples|load average|\| model|\| ---)' $OUT/timed.log | grep -vE '^  (rope|embed|mat_vec|argmax|copy|softmax|silu|rms|layer|gelu|add|attention)' | tail -60
echo "== end at $(el) s"
