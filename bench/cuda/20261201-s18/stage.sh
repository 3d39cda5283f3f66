#!/bin/bash
# Gathers a call's carried folder $K into the warm machine's work folder $W (default /w/s18): the lead's calls carry
# the kit model's xz in parts (a call's transfer holds the checkout plus ~18 MiB), the binaries and the audio, over
# several calls on one machine; once every part is there it joins the model and makes the excerpt. Prints what the
# folder holds. Sourced by the call scripts (g*.sh).
set -u
K=$(cd "$K" && pwd); W=${W:-/w/s18}; mkdir -p $W
cp -n $K/* $W/ 2>/dev/null
cd $W
for f in *.xz; do case $f in q8.xz.*) ;; *) [ -e "${f%.xz}" ] || { xz -dc "$f" > "${f%.xz}" && chmod +x "${f%.xz}"; } ;; esac; done
if [ ! -e q8.bin ] && [ -e q8.xz.00 ] && [ -e q8.xz.01 ] && [ -e q8.xz.02 ]; then cat q8.xz.0? | xz -dc > q8.bin && sha256sum q8.bin; fi
if [ ! -e excerpt.wav ] && [ -x trim ] && [ -e excerpt.flac ]; then ./trim excerpt.flac excerpt.wav 204.2 && ./trim jfk.wav jfk1s.wav 1; fi
ls -la $W
