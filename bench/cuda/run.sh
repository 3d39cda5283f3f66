#!/bin/bash
# The GPU run of the CUDA backend (cuda/README.md), on a machine with an
# NVIDIA GPU and no Go, from a folder holding: msltest.test.xz and
# cuda.test.xz (`CGO_ENABLED=0 go test -c -ldflags='-s -w'` of
# ./shaders/msltest and ./cuda, xz'd), hark.xz (`CGO_ENABLED=0 go build`),
# data.tar.xz (the shared/ files the tests read: models/stories260K.gguf,
# llm-kit/golden/stories260K.golden.json, llm-kit/ggml-quants/,
# whisper-kit/models/ggml-kit-tiny.en-q8_0.bin, audio/jfk.wav, audio/jfk.txt,
# audio/ljspeech-longform-LJ001-0021-0076.wav; ~31 MB xz'd) and kernels.ptx.gz (cuda/). Writes to
# $OUT: env.txt (GPU, driver, ptxas, the cuda package's GPU tests, the CLI
# on cpu and cuda), normal.log, permuted.log, poison.log (the msltest kernel
# and end-to-end tests on the GPU: normal block order, permuted block
# order, NaN-poisoned scratch) and sm_{80,86,89,90}.cubin made by ptxas (uncompressed; cuda/cubin/ is now
# made by bench/cuda/cubins.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" /tmp/h
for b in msltest.test cuda.test hark; do xz -dc "$here/$b.xz" >/tmp/h/$b && chmod +x /tmp/h/$b; done
tar -C /tmp/h -xJf "$here/data.tar.xz"
gzip -dc "$here/kernels.ptx.gz" >/tmp/h/kernels.ptx
S=/tmp/h/shared
export HARK_TESTDATA=$S
export PATH=$PATH:/usr/local/cuda/bin
(
	for a in 80 86 89 90; do
		(/usr/bin/time -f "ptxas sm_$a: %e s" ptxas -arch=sm_$a -O3 /tmp/h/kernels.ptx -o "$OUT/sm_$a.cubin") &
	done
	wait
) >/tmp/h/ptxas.txt 2>&1 &
kernels='SamplePlateauCut|ArgmaxKernel|AttentionKernel|ElementwiseVsCPU|MatrixGGMLKit|MatVecAllTypes|FusedMatVecAllTypes|MatMulAllTypes|Conv1DAllTypes|EmbedAllTypes|MatVecTuning|NormKernels|RopeKernel|RopeKVKernel|SampleKernel|SampleDegenerate|KernelsOtherTunings|BeamCopyKernel|WhisperFilterKernel'
cd /tmp/h
run() { # log name, extra env, tests
	echo "== $1: HARK_MSLTEST_DEVICE=cuda $2 msltest.test -test.run '^Test($3)\$' -test.v" >"$OUT/$1.log"
	env HARK_MSLTEST_DEVICE=cuda $2 ./msltest.test -test.run "^Test($3)\$" -test.v -test.count=1 -test.timeout=9m >>"$OUT/$1.log" 2>&1
	echo "== exit $?" >>"$OUT/$1.log"
}
start=$(date +%s)
run normal "HARK_CUDA_PERMUTE=" "$kernels|E2EStories|E2EWhisperJFK|E2EWhisperLongForm"
run permuted "HARK_CUDA_PERMUTE=20261124" "$kernels|E2EStories|E2EWhisperJFK|E2EWhisperLongForm"
run poison "HARK_CUDA_POISON=1" "$kernels|E2EStories|E2EWhisperJFK"
wait
{
	echo "== $(date -u)"
	nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
	uname -r
	# the CPU reference's matrix products depend on it (engine/blas)
	echo "libopenblas.so.0: $(ldconfig -p 2>/dev/null | grep -c 'libopenblas.so.0 ') (0: the CPU backend uses its Go sgemm)"
	echo "cores: $(nproc), $(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2-), avx512_vnni: $(grep -m1 -c avx512_vnni /proc/cpuinfo)"
	ptxas --version | tail -2
	cat /tmp/h/ptxas.txt
	sha256sum /tmp/h/kernels.ptx
	echo "== cuda.test -test.v (the cuda package's tests on the GPU)"
	./cuda.test -test.v -test.count=1 2>&1
	echo "== the CLI: transcribe jfk.wav (q8_0, beam 5, word timestamps, json) and generate (stories260K, greedy, 64 tokens) on cpu and cuda"
	for b in cpu cuda; do
		/usr/bin/time -f "transcribe --backend $b: %e s" ./hark transcribe --backend $b --model $S/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin \
			--language en --word-timestamps --format json $S/audio/jfk.wav >/tmp/h/jfk-$b.json
		/usr/bin/time -f "generate --backend $b: %e s" ./hark generate --backend $b --model $S/models/stories260K.gguf --temp 0 -n 64 --ignore-eos \
			"Once upon a time" >/tmp/h/gen-$b.txt
	done
	cmp /tmp/h/jfk-cpu.json /tmp/h/jfk-cuda.json && echo "transcribe: cpu and cuda json identical"
	diff <(tr ',' '\n' </tmp/h/jfk-cpu.json) <(tr ',' '\n' </tmp/h/jfk-cuda.json) | head -20
	cmp /tmp/h/gen-cpu.txt /tmp/h/gen-cuda.txt && echo "generate: cpu and cuda identical"
	head -c 300 /tmp/h/jfk-cuda.json; echo
	cat /tmp/h/gen-cuda.txt; echo
	./hark transcribe --backend auto --model $S/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin --beam 1 $S/audio/jfk.wav
	echo "== total $(($(date +%s) - start)) s"
} >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
for f in normal permuted poison; do grep -E '^(=+|--- |ok|FAIL|PASS|panic)|Error Trace|Error:|expected|actual  :|first different|msltest: kernels run' "$OUT/$f.log" | cut -c1-400 | head -40; done
