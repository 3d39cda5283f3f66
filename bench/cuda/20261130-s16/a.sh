#!/bin/bash
# Sixteenth session, lead, call A (H200, a fresh machine): unpack the kit q8_0 model, the test data and `trim`
# into /w/s16. No GPU process runs here: call C's first process is the cold start. $K holds wq8.xz, data.tar.xz,
# trim.xz (trim: bench/cuda/20261130-beam36/trim.go.txt).
set -u
K=${K:-.gpu/s16a}; K=$(cd "$K" && pwd); W=/w/s16
mkdir -p $W/shared/whisper-kit/models
xz -dc $K/wq8.xz > $W/shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
tar -C $W/shared -xJf $K/data.tar.xz
xz -dc $K/trim.xz > $W/trim && chmod +x $W/trim
ls -la $W $W/shared/*; sha256sum $W/shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
