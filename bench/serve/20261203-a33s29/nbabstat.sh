#!/usr/bin/env bash
# nbab.sh's log: per round B / A and each against the round's sampled bench (lines with foreign <= MAXF, default 5);
# medians. Usage: nbabstat.sh LOG [MAXF]
awk -v maxf=${2:-5} '
	function tps(   i) { for (i = 1; i <= NF; i++) if ($i ~ /^tok\/s[;,]?$/) return $(i-1); return $2 }
	function fr(   v) { v = $NF; sub(/%/, "", v); return v + 0 }
	function med(a, n,   i, j, t, y) { for (i=0;i<n;i++) y[i]=a[i]; for (i=0;i<n;i++) for (j=i+1;j<n;j++) if (y[j]<y[i]) {t=y[i];y[i]=y[j];y[j]=t}
		return n ? (n%2 ? y[(n-1)/2] : (y[n/2-1]+y[n/2])/2) : 0 }
	function flush() { if (a && b) { ba[n1++] = b / a; if (b > a) ahead++ } if (a && s) as[n2++] = a / s; if (b && s) bs[n3++] = b / s; a = b = s = 0 }
	/^== round/ { flush(); next }
	/^A / { if (fr() <= maxf) a = tps() } /^B / { if (fr() <= maxf) b = tps() } /^sampled / { if (fr() <= maxf) s = $2 }
	END { flush(); printf "B/A median %.3f (%d rounds, B ahead in %d); A/sampled %.3f (%d); B/sampled %.3f (%d)\n", med(ba, n1), n1, ahead, med(as, n2), n2, med(bs, n3), n3 }' "$1"
