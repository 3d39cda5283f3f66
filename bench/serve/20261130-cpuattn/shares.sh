#!/usr/bin/env bash
# Shares per unit of the weights' dot products (dotQ8_0AVX2's self time: the
# same work per token in the chat and the bench) from this folder's
# profile-*.txt: attention (contiguous or paged), the Sample pass, and all
# the CPU but the prompts' prefill and OpenBLAS's idle threads (OpenBLAS's
# own code, the dequantization of weight tiles for it, and sched_yield:
# with one pool worker the library keeps its own threads, which spin after
# each prefill).
# Usage: shares.sh profile-*.txt
for f in "$@"; do
  awk -v f="$f" '
    function pct(s) { sub("%", "", s); return s + 0 }
    / \[\.\] github.com\/harkapp\/hark\/engine\/cpu\.dotQ8_0AVX2\.abi0$/ { d = pct($2) }
    / \[\.\] github.com\/harkapp\/hark\/engine\/cpu\.\(\*Exec\)\.attention(Paged)?$/ { a += pct($1) }
    / \[\.\] github.com\/harkapp\/hark\/engine\/cpu\.\(\*Exec\)\.sample$/ { s = pct($1) }
    / \[\.\] github.com\/harkapp\/hark\/engine\/ggml\.dequantQ8$/ { p += pct($2) }
    / \[\.\] __sched_yield$/ { p += pct($1) }
    /^# dso .*libopenblas/ { p += pct($3) }
    END { printf "%-28s dots %5.2f%%  prefill+BLAS idle %4.1f%%  per unit of dots: attention %5.1f%%  sample %4.1f%%  all else but prefill %5.1f%%\n",
          f, d, p, 100 * a / d, 100 * s / d, 100 * (100 - p) / d - 100 - 100 * a / d - 100 * s / d }' "$f"
done
