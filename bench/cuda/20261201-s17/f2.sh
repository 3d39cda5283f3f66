#!/bin/bash
# Final check, call 2 of 4 (f1's machine): the model's last part, the long-form file (its FLAC, written back as WAV
# for the tests and cut to the 204.2-s excerpt), jfk. $K holds q8.xz.02, longform.flac, jfk.wav.
set -u
OUT=${OUT:-/tmp/out}; W=${W:-/w/s17}; mkdir -p $OUT
[ -d $W/pc ] || { echo "not f1's machine"; exit 3; }
bash bench/cuda/20261201-s17/stage.sh > /dev/null
cd $W && ./trim longform.flac shared/audio/ljspeech-longform-LJ001-0021-0076.wav 100000 && ./trim longform.flac excerpt.wav 204.2 && ./trim jfk.wav jfk1s.wav 1 && cp q8.bin shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin && sha256sum q8.bin excerpt.wav && ls
