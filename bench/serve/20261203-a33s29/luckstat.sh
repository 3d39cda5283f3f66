#!/usr/bin/env bash
# luck.sh's log: per server the median, min and max chat tok/s over lines with foreign <= MAXF (default 3), the greedy
# benches' the same, and the between-server spread against the within-server spread. Usage: luckstat.sh LOG [MAXF]
awk -v maxf=${2:-3} '
	function tps(   i) { for (i = 1; i <= NF; i++) if ($i ~ /^tok\/s[;,]?$/) return $(i-1); return $2 }
	function fr(   v) { v = $NF; sub(/%/, "", v); return v + 0 }
	function med(a, n,   i, j, t) { for (i=0;i<n;i++) for (j=i+1;j<n;j++) if (a[j]<a[i]) {t=a[i];a[i]=a[j];a[j]=t}
		return n%2 ? a[(n-1)/2] : (a[n/2-1]+a[n/2])/2 }
	/^(chat[0-9]+|greedy) / { if (fr() > maxf) next; k = $1; v[k, c[k]++] = tps() + 0 }
	END { for (k in c) { m = c[k]; delete x; s = 0; for (i = 0; i < m; i++) { x[i] = v[k, i]; s += x[i] }
		mean = s / m; ss = 0; for (i = 0; i < m; i++) ss += (x[i] - mean)^2
		printf "%-8s n=%2d mean %7.2f sd %6.2f median %7.2f min %7.2f max %7.2f\n", k, m, mean, sqrt(ss / (m > 1 ? m - 1 : 1)), med(x, m), x[0], x[m-1] }
	}' "$1" | sort
