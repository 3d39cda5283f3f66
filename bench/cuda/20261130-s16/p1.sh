#!/bin/bash
# Where the greedy excerpt's 0.85 s go (for the next session), call 1 of 3 on a fresh machine: the kit model's first
# third, the excerpt (FLAC written back as WAV by trim), jfk and its first second. $K holds wq8.xz.1, excerpt.flac,
# jfk.wav, trim.xz.
set -u
K=${K:-.gpu/p1}; K=$(cd "$K" && pwd); W=/w/p
mkdir -p $W && cd $W && cp $K/wq8.xz.1 $K/jfk.wav . && xz -dc $K/trim.xz > trim && chmod +x trim
./trim $K/excerpt.flac excerpt.wav 204.2 && ./trim jfk.wav jfk1s.wav 1 && ls -la
