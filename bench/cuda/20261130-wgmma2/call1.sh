#!/bin/bash
# GPU call 1 for issue #35's GEMM target, round 6 (branch wgmma2): mat_mul_wgmma_f16 with producer and consumer
# warpgroups (mbarriers, both operands by descriptor), its 4-stage variant (HARK_CUDA_PTX_SM90A), ptxas, the GEMM
# benchmark beside torch.mm bf16 in the same command, Nsight Compute on one launch, the tests in normal, permuted and
# poisoned runs (the sm_80 module changed too: mat_mul_big's bindings factored into mma.h), pp512 q8_0/q4_0/f16.
# Run from the repository root as K=.gpu/wgmma2 bash .gpu/wgmma2/call1.sh; $K holds hark.xz, cuda.test.xz,
# msltest.test.xz, sm90a.ptx.xz (the committed module), sm90a-ns4.ptx.xz and data.tar.xz.
set -u
K=${K:-.gpu/wgmma2}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared && cd /w
for b in hark cuda.test msltest.test sm90a.ptx sm90a-ns4.ptx; do xz -dc $K/$b.xz > $b; done; chmod +x hark cuda.test msltest.test
tar -C /w/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=/w/shared PATH=$PATH:/usr/local/cuda/bin
( ./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer /w/shared/llm-kit/tokenizers/smollm2 --pp 8 --tg 0 -r 1 -t 8; ls -la /w/m ) > $OUT/write.log 2>&1 &
W=$!
{ nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm --format=csv
  for p in sm90a sm90a-ns4; do echo "== ptxas $p"; ptxas -arch=sm_90a -v -o $p.cubin $p.ptx 2>&1 | grep -vE '^$'
    echo "HGMMA in SASS: $(cuobjdump -sass $p.cubin | grep -c HGMMA)"; cuobjdump -sass $p.cubin | grep -m2 HGMMA; done
  echo "== layout at $(el) s"; timeout 90 ./cuda.test -test.run '^(TestGPUMatMulWGMMALayout|TestModulesFor|TestNativeModuleEntries)$' -test.v -test.count=1 2>&1 | grep -vE '^=== RUN' | head -40
} > $OUT/gemm.log 2>&1
cat $OUT/gemm.log
if grep -q -- '--- PASS: TestGPUMatMulWGMMALayout' $OUT/gemm.log; then
  { echo "== GEMM 4096x4096x512 at $(el) s"; timeout 120 ./cuda.test -test.run XXX -test.bench 'GPUMatMul/f16/(big|wgmma)' -test.benchtime 10x 2>&1 | grep -E 'Benchmark|FAIL|panic|skip'
    echo "== GEMM, 4-stage variant (HARK_CUDA_PTX_SM90A=sm90a-ns4.ptx) at $(el) s"
    HARK_CUDA_PTX_SM90A=sm90a-ns4.ptx timeout 60 ./cuda.test -test.run XXX -test.bench 'GPUMatMul/f16/wgmma' -test.benchtime 10x 2>&1 | grep -E 'Benchmark|FAIL|panic|skip'
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
    echo "== GEMM again (wgmma) at $(el) s"; timeout 60 ./cuda.test -test.run XXX -test.bench 'GPUMatMul/f16/wgmma' -test.benchtime 10x 2>&1 | grep -E 'Benchmark|FAIL|panic|skip'
  } >> $OUT/gemm.log 2>&1
  NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  { echo "== ncu wgmma ($NCU) at $(el) s"; HARK_CUDA_GRAPHS=0 timeout 90 $NCU --clock-control none -k regex:'^hark_mat_mul_wgmma_f16$' --launch-count 1 \
      ./cuda.test -test.run XXX -test.bench 'GPUMatMul/f16/wgmma$' -test.benchtime 1x 2>&1; echo "exit $? at $(el) s"; } > $OUT/ncu-wgmma.log 2>&1
  sed -n '/== GEMM/,$p' $OUT/gemm.log
  grep -E '^  hark_|Duration|Registers Per|Achieved Occupancy|Issued Warp|Warp Cycles Per Issued|Throughput|L2 Hit|Stall|exit' $OUT/ncu-wgmma.log | head -30
fi
if ! grep -q -- '--- PASS: TestGPUMatMulWGMMALayout' $OUT/gemm.log; then # a wrong or hung kernel: one diagnostic run, no more
  HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_TUNE=MatMulMMA=16,AttnMMA=1,MatMulBig=1 timeout 60 ./msltest.test -test.run '^TestMatMulBigTensorCores$' -test.v -test.count=1 2>&1 | tail -40
  exit 1
fi
{ for mode in normal permuted poison; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261130";; poison) E="HARK_CUDA_POISON=1";; esac
    echo "== msltest $mode ($E) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_TUNE=MatMulMMA=16,AttnMMA=1,MatMulBig=1 timeout 120 ./msltest.test -test.run '^Test(MatMulBigTensorCores|MatMulTensorCores|E2EStories)$' -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error|expected|actual|wgmma' $OUT/msltest-$mode.v.log | head -24
    echo "== cuda $mode at $(el) s"
    env $E timeout 90 ./cuda.test -test.run '^(TestGPUMatMulWGMMALayout|TestGPUStoriesReplay)$' -test.v -test.count=1 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS|panic)|Error' | head
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
cat $OUT/tests.log
wait $W
M=/w/m/smollm2-135m-shape-v1-L30-f16.gguf
{ for f in q8_0 q4_0; do echo "== hark $f pp512 at $(el) s"; ./hark bench llm --backend cuda --model /w/m/smollm2-135m-shape-v1-L30-$f.gguf -r 5 --pp 512 --tg 0 2>&1 | grep pp512; done
  echo "== hark f16 pp512 (wgmma) at $(el) s"; ./hark bench llm --backend cuda --model $M -r 5 --pp 512 --tg 0 2>&1 | grep pp512
  echo "== f16 pp512 MatMulWGMMA=1000000 (mat_mul_big_f16) at $(el) s"; HARK_CUDA_TUNE=MatMulWGMMA=1000000 ./hark bench llm --backend cuda --model $M -r 5 --pp 512 --tg 0 2>&1 | grep pp512
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
cat $OUT/timed.log
(cd $OUT && tar -czf msltest-logs.tgz msltest-*.v.log && rm msltest-*.v.log)
