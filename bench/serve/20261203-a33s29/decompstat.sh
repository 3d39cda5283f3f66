#!/usr/bin/env bash
# decomp.sh's log: per round (lines with foreign <= MAXF, default 5, else the round's ratios that need them are left
# out) sampled, chat and nostream against the round's greedy bench, and chat against nostream; the medians of the
# per-round ratios and of each side. Usage: decompstat.sh LOG [MAXF]
awk -v maxf=${2:-5} '
	function tps(   i) { for (i = 1; i <= NF; i++) if ($i ~ /^tok\/s[;,]?$/) return $(i-1); return $2 }
	function fr(   v) { v = $NF; sub(/%/, "", v); return v + 0 }
	function med(a, n,   i, j, t, y) { for (i=0;i<n;i++) y[i]=a[i]; for (i=0;i<n;i++) for (j=i+1;j<n;j++) if (y[j]<y[i]) {t=y[i];y[i]=y[j];y[j]=t}
		return n ? (n%2 ? y[(n-1)/2] : (y[n/2-1]+y[n/2])/2) : 0 }
	function add(k, v) { R[k, N[k]++] = v }
	function flush() { if (g) { if (s) add("sampled/greedy", s / g); if (c) add("chat/greedy", c / g); if (n) add("nostream/greedy", n / g) }
		if (c && n) add("chat/nostream", c / n); if (s && n) add("nostream/sampled", n / s); if (s && c) add("chat/sampled", c / s); g = s = c = n = 0 }
	/^== round/ { flush(); next }
	/^greedy / { if (fr() <= maxf) { g = $2; V["greedy", M["greedy"]++] = g } }
	/^sampled / { if (fr() <= maxf) { s = $2; V["sampled", M["sampled"]++] = s } }
	/^chat / { if (fr() <= maxf) { c = tps(); V["chat", M["chat"]++] = c } }
	/^nostream / { if (fr() <= maxf) { n = tps(); V["nostream", M["nostream"]++] = n } }
	END { flush()
		for (k in M) { delete y; for (i = 0; i < M[k]; i++) y[i] = V[k, i]; printf "%-10s median %7.2f tok/s (%d)\n", k, med(y, M[k]), M[k] }
		for (k in N) { delete y; for (i = 0; i < N[k]; i++) y[i] = R[k, i]; printf "%-18s per-round median %.3f (%d rounds)\n", k, med(y, N[k]), N[k] } }' "$1" | sort
