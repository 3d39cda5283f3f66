#!/bin/bash
# main after the merges of cuda18 (graphs + chaining on by default), cuda17c
# and cpu12q: stories and jfk (greedy, beam 5, word timestamps) on the GPU
# against the CPU, graphs on (default) and off.
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" /tmp/h/shared/whisper-kit/models
for b in msltest.test cuda.test; do xz -dc "$here/$b.xz" >/tmp/h/$b && chmod +x /tmp/h/$b; done
tar -C /tmp/h -xJf "$here/small.tar.xz"
xz -dc "$here/model.xz" >/tmp/h/shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/tmp/h/shared
cd /tmp/h
{ echo "== $(date -u)"; nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
  echo "cores: $(nproc), $(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2-), avx512_vnni: $(grep -m1 -c avx512_vnni /proc/cpuinfo)"
  ./cuda.test -test.run '^TestCubinGuard$' -test.v -test.count=1 2>&1; } >"$OUT/env.txt" 2>&1
( echo "== cuda.test -test.run ^TestGPU -test.v"; timeout 90 ./cuda.test -test.run "^TestGPU" -test.v -test.count=1 2>&1; echo "== exit $?" ) >"$OUT/cuda-gpu.log"
for g in 1 0; do
  ( echo "== HARK_CUDA_GRAPHS=$g HARK_MSLTEST_DEVICE=cuda msltest.test -test.run '^Test(E2EStories|E2EWhisperJFK)\$' -test.v"
    HARK_CUDA_GRAPHS=$g HARK_MSLTEST_DEVICE=cuda timeout 100 ./msltest.test -test.run '^Test(E2EStories|E2EWhisperJFK)$' -test.v -test.count=1 2>&1; echo "== exit $?" ) >"$OUT/e2e-graphs$g.log"
done
cat "$OUT/env.txt"; for f in "$OUT"/*.log; do echo "#### $f"; grep -E '^(---|===|==|ok|FAIL|PASS)|panic|Error' "$f" | grep -v '=== RUN' | head -40; done
