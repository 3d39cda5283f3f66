#!/usr/bin/env bash
# Medians of ab.sh logs, all lines and those whose foreign share is at most MAXF (default 10): chatA, chatB, sampled, greedy.
# Usage: abmed.sh LOG [MAXF]
awk -v maxf=${2:-10} '
	function tps(   i) { for (i = 1; i <= NF; i++) if ($i ~ /^tok\/s[;,]?$/) return $(i-1); return $2 }
	function fr() { v = $NF; sub(/%/, "", v); return v + 0 }
	/^(chatA|chatB|sampled|greedy) / { k = $1; x = tps(); all[k, na[k]++] = x; if (fr() <= maxf) cl[k, nc[k]++] = x }
	function med(a, k, n,   i, j, t, b) { for (i = 0; i < n; i++) b[i] = a[k, i]
		for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
		return n ? (n % 2 ? b[(n-1)/2] : (b[n/2-1] + b[n/2]) / 2) : 0 }
	END { for (k in na) printf "%-8s all %7.2f (%2d)   foreign<=%d%%: %7.2f (%2d)\n", k, med(all, k, na[k]), na[k], maxf, med(cl, k, nc[k]), nc[k] }' "$1" | sort
