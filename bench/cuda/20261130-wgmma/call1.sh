#!/bin/bash
# GPU call for issue #35's sm_90a wgmma GEMM (branch wgmma): ptxas/SASS of the sm_90a module, the layout test,
# then (if it passes) the f16 GEMM (big, big_h, wgmma) beside torch.mm, the tensor-core msltest tests and
# TestE2EStories in normal, permuted-block and NaN-poisoned runs (and TestMatMulBigTensorCores in the executor),
# TestGPUStoriesReplay, pp512 f16 with and without wgmma. Run from the repository root as
# K=.gpu/wgmma bash .gpu/wgmma/call1.sh, $K holding hark.xz, cuda.test.xz, msltest.test.xz, data.tar.xz, sm90a.ptx.xz.
set -u
K=${K:-.gpu/wgmma}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared && cd /w
for b in hark cuda.test msltest.test sm90a.ptx; do xz -dc $K/$b.xz > $b; done; chmod +x hark cuda.test msltest.test
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared PATH=$PATH:/usr/local/cuda/bin
( ./hark bench llm --backend cpu --dir /w/m --type f16 --tokenizer /w/shared/llm-kit/tokenizers/smollm2 --pp 8 --tg 0 -r 1 -t 8; ls -la /w/m ) > $OUT/write.log 2>&1 &
W=$!
( HARK_MSLTEST_DEVICE= timeout 200 ./msltest.test -test.run '^TestMatMulBigTensorCores$' -test.v -test.count=1 > $OUT/msltest-executor.v.log 2>&1; echo "exit $?" >> $OUT/msltest-executor.v.log ) &
X=$!
{ nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm --format=csv
  ptxas -arch=sm_90a -v -o wg.cubin sm90a.ptx 2>&1 | grep -vE '^$'
  echo "HGMMA in SASS: $(cuobjdump -sass wg.cubin | grep -c HGMMA)"; cuobjdump -sass wg.cubin | grep -m3 HGMMA
  echo "== layout at $(el) s"; timeout 60 ./cuda.test -test.run '^(TestGPUMatMulWGMMALayout|TestModulesFor|TestNativeModuleEntries)$' -test.v -test.count=1 2>&1 | grep -vE '^=== RUN' | head -40
} > $OUT/gemm.log 2>&1
cat $OUT/gemm.log
if grep -q -- '--- PASS: TestGPUMatMulWGMMALayout' $OUT/gemm.log; then
  { echo "== GEMM 4096x4096x512 at $(el) s"; timeout 120 ./cuda.test -test.run XXX -test.bench 'GPUMatMul/f16/(big|wgmma)' -test.benchtime 10x 2>&1 | grep -E 'Benchmark|FAIL|panic|skip'
    echo "== torch.mm bf16 at $(el) s"; PYTHONUNBUFFERED=1 timeout 60 python3 -c '
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
  } >> $OUT/gemm.log 2>&1
  sed -n '/== GEMM/,$p' $OUT/gemm.log
fi
{ for mode in normal permuted poison; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261130";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== msltest $mode ($E) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_TUNE=MatMulMMA=16,AttnMMA=1,MatMulBig=1 timeout 60 ./msltest.test -test.run '^Test(MatMulBigTensorCores|MatMulTensorCores|E2EStories)$' -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(--- |ok|FAIL|PASS|panic)|Error|expected|actual|wgmma' $OUT/msltest-$mode.v.log | head -16
    echo "== cuda $mode at $(el) s"
    env $E timeout 90 ./cuda.test -test.run '^(TestGPUMatMulWGMMALayout|TestGPUStoriesReplay)$' -test.count=1 2>&1 | tail -3
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
cat $OUT/tests.log
wait $W
M=/w/m/smollm2-135m-shape-v1-L30-f16.gguf
{ echo "== hark f16 pp512 (wgmma) at $(el) s"; ./hark bench llm --backend cuda --model $M -r 5 --pp 512 --tg 0 2>&1 | grep pp512
  echo "== f16 pp512 MatMulWGMMA=1000000 (mat_mul_big_f16) at $(el) s"; HARK_CUDA_TUNE=MatMulWGMMA=1000000 ./hark bench llm --backend cuda --model $M -r 5 --pp 512 --tg 0 2>&1 | grep pp512
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
cat $OUT/timed.log
wait $X; echo "== executor:"; grep -E '^(--- |ok|FAIL|PASS|panic|exit)|Error' $OUT/msltest-executor.v.log | head
(cd $OUT && tar -czf msltest-logs.tgz msltest-*.v.log && rm msltest-*.v.log)
