#!/usr/bin/env bash
# abbin.sh's log (round 30 added the servers' CPU time): per round chatB / chatA, chatA / greedy,
# chatB / greedy, and with greedyB lines chatB / greedyB and greedyB / greedy (lines with foreign <= MAXF, default 5),
# their medians, how often B was ahead, the medians of the sides, and each server's median CPU time a streamed token
# (its threads' time on a CPU, first token to last, over the 127 tokens after the first: stream-speed.mjs's HARK_PID
# field). Usage: abbinstat.sh LOG [MAXF]
awk -v maxf=${2:-5} '
	function tps(   i) { for (i = 1; i <= NF; i++) if ($i ~ /^tok\/s[;,]?$/) return $(i-1); return $2 }
	function cpu(   i) { for (i = 1; i <= NF; i++) if ($i == "server") return $(i+1) / 127; return 0 }
	function fr(   v) { v = $NF; sub(/%/, "", v); return v + 0 }
	function med(a, n,   i, j, t, y) { for (i=0;i<n;i++) y[i]=a[i]; for (i=0;i<n;i++) for (j=i+1;j<n;j++) if (y[j]<y[i]) {t=y[i];y[i]=y[j];y[j]=t}
		return n ? (n%2 ? y[(n-1)/2] : (y[n/2-1]+y[n/2])/2) : 0 }
	function flush() { if (a && b) { ba[n1++] = b / a; if (b > a) ahead++ } if (a && g) ag[n2++] = a / g; if (b && g) bg[n3++] = b / g; if (b && h) bh[n4++] = b / h; if (h && g) hg[n5++] = h / g; a = b = g = h = 0 }
	/^== round/ { flush(); next }
	/^chatA / { if (fr() <= maxf) { a = tps(); A[na++] = a; CA[nca++] = cpu() } } /^chatB / { if (fr() <= maxf) { b = tps(); B[nb++] = b; CB[ncb++] = cpu() } }
	/^greedy / { if (fr() <= maxf) { g = $2; G[ng++] = g } }
	/^greedyB / { if (fr() <= maxf) { h = $2; H[nh++] = h } }
	END { flush(); printf "B/A median %.3f (%d rounds, B ahead in %d); A/greedy %.3f (%d); B/greedy %.3f (%d); medians: A %.2f (%d), B %.2f (%d), greedy %.2f (%d)\n", med(ba, n1), n1, ahead, med(ag, n2), n2, med(bg, n3), n3, med(A, na), na, med(B, nb), nb, med(G, ng), ng
		if (nh) printf "chatB / greedyB %.3f (%d); greedyB / greedy %.3f (%d); greedyB median %.2f (%d)\n", med(bh, n4), n4, med(hg, n5), n5, med(H, nh), nh
		printf "server CPU a token (ms, median): A %.3f (%d), B %.3f (%d)\n", med(CA, nca), nca, med(CB, ncb), ncb }' "$1"
