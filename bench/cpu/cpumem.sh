#!/usr/bin/env bash
# Issue 37 (packed weights replace the originals): Hark before and after on this machine, same file, alternating.
#   bench/cpu/cpumem.sh BEFORE_BIN AFTER_BIN MODEL OUT.log [ROUNDS]
# BEFORE_BIN/AFTER_BIN: `CGO_ENABLED=0 go build -trimpath -o BIN .` at the two commits; MODEL: the
# SmolLM2-135M-shaped q8_0 file `hark bench llm --type q8_0` writes (smollm2-135m-shape-v1-L30-q8_0.gguf).
# Each round runs before, then after: `hark bench llm --model MODEL --pp 512 --tg 128 -r 3 -t 2`.
set -u
B=$1; A=$2; M=$3; O=$4; N=${5:-2}
exec > >(tee -a "$O") 2>&1
echo "== machine"; date -u; uname -r; nproc; lscpu | grep -E 'Model name|Hypervisor'
grep -o -w -E 'avx2|avx512f|avx512_vnni|amx_tile' /proc/cpuinfo | sort | uniq -c
sha256sum "$B" "$A"; ls -l "$M"
for r in $(seq 1 "$N"); do
  for x in before:"$B" after:"$A"; do
    echo "== round $r ${x%%:*}"; uptime
    /usr/bin/time -f "maxrss %M kB, %e s" "${x#*:}" bench llm --model "$M" --pp 512 --tg 128 -r 3 -t 2
  done
done
