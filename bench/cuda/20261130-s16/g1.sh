#!/bin/bash
# After the final check: the CLI's spectrogram computed beside the backend's start (commit 23aa649), timed against
# the merged main's hark (hark0, e5ab622) and whisper.cpp built again in this call (a fresh machine). Call 1: the kit
# model's first third, the excerpt (FLAC, written back as the 16-bit WAV by trim), jfk, whisper.cpp's CUDA build.
# $K holds wq8.xz.1, excerpt.flac, jfk.wav, trim.xz, whisper-cuda-src.tar.xz, build-peers.sh.
set -u
K=${K:-.gpu/g1}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/g
mkdir -p $OUT $W/src && cd $W
cp $K/wq8.xz.1 $K/jfk.wav .
xz -dc $K/trim.xz > trim && chmod +x trim && ./trim $K/excerpt.flac excerpt.wav 204.2 && sha256sum excerpt.wav
tar -C src -xJf $K/whisper-cuda-src.tar.xz
export PATH=$PATH:/usr/local/cuda/bin
{ bash $K/build-peers.sh build $W/src $W/pc --cuda whisper 2>&1 | tail -3; echo "build exit $? at $(( $(date +%s) - S )) s"; ls -la $W/pc/bin; } > $OUT/g1-build.log 2>&1
cat $OUT/g1-build.log
