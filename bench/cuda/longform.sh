#!/bin/bash
# The long-form teacher-forced check against the CPU backend with
# float activations (cpu.Options.FloatActivations), greedy and beam 5, plus
# jfk.wav against both CPU modes and TestMatrixGGMLKit (its data was
# missing from the previous H200 run) in normal, permuted and poisoned
# order. A subset of bench/cuda/run.sh (same binaries and data.tar.xz, plus
# llm-kit/ggml-quants/); logs: longform-float*.log, ggmlkit*.log (the
# earlier longform*.log: this script at commit d0859d9, against the shipped CPU).
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" /tmp/h
for b in msltest.test cuda.test; do xz -dc "$here/$b.xz" >/tmp/h/$b && chmod +x /tmp/h/$b; done
tar -C /tmp/h -xJf "$here/data.tar.xz"
export HARK_TESTDATA=/tmp/h/shared
cd /tmp/h
start=$(date +%s)
{
	echo "== $(date -u)"
	nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
	echo "libopenblas.so.0: $(ldconfig -p 2>/dev/null | grep -c 'libopenblas.so.0 ') (0: the CPU backend uses its Go sgemm)"
	echo "cores: $(nproc), $(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2-), avx512_vnni: $(grep -m1 -c avx512_vnni /proc/cpuinfo)"
	echo "== cuda.test -test.run '^TestCubinGuard\$' -test.v"
	./cuda.test -test.run '^TestCubinGuard$' -test.v -test.count=1 2>&1
} >"$OUT/env.txt" 2>&1
run() { # log name, extra env, tests, timeout
	echo "== $1: HARK_MSLTEST_DEVICE=cuda $2 msltest.test -test.run '^Test($3)\$' -test.v" >"$OUT/$1.log"
	env HARK_MSLTEST_DEVICE=cuda $2 timeout $4 ./msltest.test -test.run "^Test($3)\$" -test.v -test.count=1 -test.timeout=9m >>"$OUT/$1.log" 2>&1
	echo "== exit $? after $(($(date +%s) - start)) s" >>"$OUT/$1.log"
}
run ggmlkit "HARK_CUDA_PERMUTE=" "MatrixGGMLKit" 30
run ggmlkit-permuted "HARK_CUDA_PERMUTE=20261124" "MatrixGGMLKit" 30
run ggmlkit-poison "HARK_CUDA_POISON=1" "MatrixGGMLKit" 30
run longform-float "HARK_CUDA_PERMUTE=" "E2EWhisperJFK|E2EWhisperLongForm" $((200 - ($(date +%s) - start)))
cat "$OUT/env.txt"
for f in "$OUT"/*.log; do grep -vE '^=== RUN|matrix_kit_test' "$f" | cut -c1-400 | head -60; done
