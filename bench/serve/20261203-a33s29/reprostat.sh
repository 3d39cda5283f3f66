#!/usr/bin/env bash
# repro.sh's log: per block the rounds' chat / greedy-bench ratios (ab.sh: each chat of the round against the round's
# greedy; speed-cpu.sh: the round's chat against its bench), lines with foreign > MAXF (default 3) left out (speed-cpu.sh
# lines carry none), and the median per script. Usage: reprostat.sh LOG [MAXF]
awk -v maxf=${2:-3} '
	function tps(   i) { for (i = 1; i <= NF; i++) if ($i ~ /^tok\/s[;,]?$/) return $(i-1); return $NF }
	function fr(   v) { if ($(NF-1) != "foreign") return 0; v = $NF; sub(/%/, "", v); return v + 0 }
	function med(a, n,   i, j, t, y) { for (i=0;i<n;i++) y[i]=a[i]; for (i=0;i<n;i++) for (j=i+1;j<n;j++) if (y[j]<y[i]) {t=y[i];y[i]=y[j];y[j]=t}
		return n%2 ? y[(n-1)/2] : (y[n/2-1]+y[n/2])/2 }
	function flush(   k) { if (g > 0 && ok) for (k = 0; k < nc; k++) { rr[mode, nr[mode]++] = c[k] / g; out = out sprintf(" %.3f", c[k] / g) } nc = 0; g = 0; ok = 1 }
	/^=== / { flush(); if (out != "") print blk, out; out = ""; blk = $2; mode = ($2 == "ab.sh") ? "ab" : "sp"; inr = 0; next }
	/^== round/ { flush(); inr = 1; next }
	/^== medians/ { flush(); next }
	/^(chat[AB] |run 1:)/ && inr { c[nc++] = tps(); if (fr() > maxf) ok = 0 }
	/^greedy / && inr { g = $2; if (fr() > maxf) ok = 0 }
	/^samples.*chained/ && inr { g = $NF }
	END { flush(); if (out != "") print blk, out
		for (m in nr) { delete y; for (i = 0; i < nr[m]; i++) y[i] = rr[m, i]; printf "%s: %d chats, median chat/bench %.3f\n", m, nr[m], med(y, nr[m]) } }' "$1"
