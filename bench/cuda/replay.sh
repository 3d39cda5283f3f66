#!/bin/bash
# The GPU run of graph replay and chaining (#18), on a machine with an
# NVIDIA GPU and no Go, from a folder holding cuda.test.xz and hark.xz
# (CGO_ENABLED=0 go test -c / go build, -ldflags=-s -w, xz'd) and
# data.tar.xz (shared/models/stories260K.gguf,
# shared/llm-kit/golden/stories260K.golden.json,
# shared/llm-kit/tokenizers/smollm2/). It runs the cuda package's tests
# on the GPU, then hark bench llm tg128 on SmolLM2-shape q8_0/q4_0/f16 in
# three modes in the same run (part 1's kernel-by-kernel path, graphs,
# graphs+chain), then a kernel-time profile (nsys) if the machine has it.
# Outputs: gpu-tests.log, bench.log, profile.log (committed as
# replay-tests.log and replay-bench.log; the 2026-11-27 machine had no
# nsys).
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" /tmp/h
T0=$(date +%s)
for b in cuda.test hark; do xz -dc "$here/$b.xz" >/tmp/h/$b && chmod +x /tmp/h/$b; done
tar -C /tmp/h -xJf "$here/data.tar.xz"
S=/tmp/h/shared
export HARK_TESTDATA=$S PATH=$PATH:/usr/local/cuda/bin
cd /tmp/h
L=$OUT/gpu-tests.log
echo "== $(date -u) cuda.test -test.v (the cuda package's tests on the GPU: graphs+chain, graphs, per-dispatch)" >$L
timeout 100 ./cuda.test -test.v -test.count=1 >>$L 2>&1; echo "== exit $? at $(($(date +%s)-T0)) s" >>$L
grep -E '^(--- |ok|FAIL|PASS|panic)|Error|launches|Steps' $L | cut -c1-400 | head -40
B=$OUT/bench.log
{
echo "== $(date -u)"
nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.max.sm --format=csv
echo "cores: $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
for mode in "per-dispatch|HARK_CUDA_GRAPHS=0 HARK_CUDA_CHAIN=0" "graphs|HARK_CUDA_CHAIN=0" "graphs+chain|HARK_CUDA_GRAPHS=1"; do
  echo "== mode ${mode%%|*}: env ${mode#*|} hark bench llm --backend cuda --pp 0 --tg 128 -r 5 --chain --type q8_0,q4_0,f16 --dir /tmp/h/bench --tokenizer \$S/llm-kit/tokenizers/smollm2"
  env ${mode#*|} timeout 80 ./hark bench llm --backend cuda --pp 0 --tg 128 -r 5 --chain --type q8_0,q4_0,f16 --dir /tmp/h/bench --tokenizer $S/llm-kit/tokenizers/smollm2 2>&1
  echo "== exit $? at $(($(date +%s)-T0)) s"
done
} >$B 2>&1
cat $B
P=$OUT/profile.log
{
NS=$(command -v nsys || ls /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda/bin/nsys 2>/dev/null | head -1)
echo "nsys: ${NS:-none}"
if [ -n "$NS" ]; then
  echo "== nsys profile: hark bench llm --backend cuda --model q8_0 file --pp 0 --tg 64 -r 1 --chain (graphs+chain)"
  timeout 60 $NS profile -t cuda --cuda-graph-trace=node -o /tmp/h/prof -f true ./hark bench llm --backend cuda --model /tmp/h/bench/smollm2-135m-shape-v1-L30-q8_0.gguf --pp 0 --tg 64 -r 1 --chain >/tmp/h/nsys.txt 2>&1; echo "exit $?"; tail -5 /tmp/h/nsys.txt
  timeout 40 $NS stats -r cuda_gpu_kern_sum -f csv /tmp/h/prof.nsys-rep 2>&1 | cut -c1-250 | head -40
fi
echo "== at $(($(date +%s)-T0)) s"
} >$P 2>&1
cat $P
