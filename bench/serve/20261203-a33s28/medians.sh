#!/usr/bin/env bash
# Medians of rounds.sh logs: greedy, sampled, chat tok/s and the ratios. Usage: medians.sh LOG...
awk '/^greedy/ {g[ng++]=$2} /^sampled/ {s[ns++]=$2} /^chat/ {for (i=1;i<=NF;i++) if ($i ~ /^tok\/s[;,]?$/) {c[nc++]=$(i-1)}}
	function med(a, n,   i, j, t) { for (i=0;i<n;i++) for (j=i+1;j<n;j++) if (a[j]<a[i]) {t=a[i];a[i]=a[j];a[j]=t}
		return n%2 ? a[(n-1)/2] : (a[n/2-1]+a[n/2])/2 }
	END { mg=med(g,ng); ms=med(s,ns); mc=med(c,nc); printf "medians: greedy %.2f (%d), sampled %.2f (%d), chat %.2f (%d); chat/greedy %.3f, chat/sampled %.3f, sampled/greedy %.3f\n", mg, ng, ms, ns, mc, nc, mc/mg, mc/ms, ms/mg }' "$@"
