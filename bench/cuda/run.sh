#!/bin/bash
# The GPU run of the CUDA backend (cuda/README.md): on a machine with an
# NVIDIA GPU and no Go, from a folder holding msltest.test.xz (built by
# `CGO_ENABLED=0 go test -c -ldflags=-s\ -w ./shaders/msltest` and xz'd),
# data.tar.xz (the shared/ files the tests read) and kernels.ptx. Logs go
# to $OUT: env.txt, normal.log, permuted.log, poison.log, ptxas.txt and
# the sm_XX.cubin files ptxas makes from kernels.ptx.
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" /tmp/h
xz -dc "$here/msltest.test.xz" >/tmp/h/msltest.test && chmod +x /tmp/h/msltest.test
tar -C /tmp/h -xJf "$here/data.tar.xz"
export HARK_TESTDATA=/tmp/h/shared HARK_MSLTEST_DEVICE=cuda
{
	date -u
	nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
	uname -r
	nproc
} >"$OUT/env.txt" 2>&1
(
	command -v ptxas || export PATH=$PATH:/usr/local/cuda/bin
	ptxas --version
	for a in 80 86 89 90; do
		(/usr/bin/time -f "sm_$a: %e s" ptxas -arch=sm_$a -O3 "$here/kernels.ptx" -o "$OUT/sm_$a.cubin") &
	done
	wait
	sha256sum "$here/kernels.ptx"
) >"$OUT/ptxas.txt" 2>&1 &
kernels='ArgmaxKernel|AttentionKernel|ElementwiseVsCPU|MatrixGGMLKit|MatVecAllTypes|FusedMatVecAllTypes|MatMulAllTypes|Conv1DAllTypes|EmbedAllTypes|MatVecTuning|NormKernels|RopeKernel|RopeKVKernel|SampleKernel|SampleDegenerate|KernelsOtherTunings'
cd /tmp/h
run() { # name, extra env, tests
	echo "== $1: HARK_MSLTEST_DEVICE=cuda $2 msltest.test -test.run '^Test($3)\$' -test.v" | tee "$OUT/$1.log"
	env $2 ./msltest.test -test.run "^Test($3)\$" -test.v -test.count=1 -test.timeout=9m >>"$OUT/$1.log" 2>&1
	echo "== exit $?" >>"$OUT/$1.log"
}
start=$(date +%s)
run normal "HARK_CUDA_PERMUTE=" "$kernels|E2EStories|E2EWhisperJFK|E2EWhisperLongForm"
run permuted "HARK_CUDA_PERMUTE=20261124" "$kernels|E2EStories|E2EWhisperJFK|E2EWhisperLongForm"
run poison "HARK_CUDA_POISON=1" "$kernels|E2EStories|E2EWhisperJFK"
wait
echo "total $(($(date +%s) - start)) s"
cat "$OUT/env.txt" "$OUT/ptxas.txt"
for f in normal permuted poison; do grep -E '^(=+|--- |ok|FAIL|PASS|panic)|Error Trace|Error:|msltest: kernels run' "$OUT/$f.log" | head -60; done
