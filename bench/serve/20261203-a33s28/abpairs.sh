#!/usr/bin/env bash
# Per round of an ab.sh log: chatB / chatA, chatA / sampled, chatB / sampled (and against greedy where the log has it) (rounds where every line's foreign share
# is at most MAXF, default 3); medians and how often B was ahead. Usage: abpairs.sh LOG [MAXF]
awk -v maxf=${2:-3} '
	function tps(   i) { for (i = 1; i <= NF; i++) if ($i ~ /^tok\/s[;,]?$/) return $(i-1); return $2 }
	function fr(   v) { v = $NF; sub(/%/, "", v); return v + 0 }
	function flush() { if (ok && a && b && s) { if (verbose) print a, b, s, g; ba[n] = b / a; as[n] = a / s; bs[n] = b / s; if (b > a) ahead++
		if (g) { ag[ng] = a / g; bg[ng] = b / g; ng++ }; n++ } a = b = s = g = 0; ok = 1 }
	/^== round/ { flush() }
	/^chatA / { a = tps(); if (fr() > maxf) ok = 0 }
	/^chatB / { b = tps(); if (fr() > maxf) ok = 0 }
	/^sampled / { s = tps(); if (fr() > maxf) ok = 0 }
	/^greedy / { g = tps(); if (fr() > maxf) ok = 0 }
	function med(x, n,   i, j, t, y) { for (i = 0; i < n; i++) y[i] = x[i]
		for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (y[j] < y[i]) { t = y[i]; y[i] = y[j]; y[j] = t }
		return n % 2 ? y[(n-1)/2] : (y[n/2-1] + y[n/2]) / 2 }
	BEGIN { ok = 1; n = 0; ng = 0 }
	END { flush(); if (verbose) for (k = 0; k < n; k++) print "ba", k, ba[k]; printf "rounds %d (foreign<=%d%%): median B/A %.3f (B ahead in %d), A/sampled %.3f, B/sampled %.3f", n, maxf, med(ba, n), ahead, med(as, n), med(bs, n)
		if (ng) printf "; A/greedy %.3f, B/greedy %.3f (%d)", med(ag, ng), med(bg, ng), ng
		printf "\n" }' "$1"
