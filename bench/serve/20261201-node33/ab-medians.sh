#!/usr/bin/env bash
# Medians of ab.sh logs: per build, bench tg128 chained and chat tok/s, the chat
# against the same build's bench, the rounds where B beat A, and the median client
# CPU a streamed token. Usage: ab-medians.sh LOG...
for f in "$@"; do
	awk -v f="$f" '
		/^== round/ { r++ }
		/^bench [AB] / { v = $5; b[$2, nb[$2]++] = v; br[$2, r] = v; if ($5 ~ /:$/) next }
		/^chat [AB] / { v = $(NF-1); c[$2, nc[$2]++] = v; cr[$2, r] = v
			if ((i = index($0, " ms a token)"))) { u = substr($0, 1, i - 1); sub(/.*\(/, "", u); cu[$2, ncu[$2]++] = u + 0 } }
		function med(a, k, n,   i, j, t, x) { for (i = 0; i < n; i++) x[i] = a[k, i] + 0
			for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
			return n % 2 ? x[(n - 1) / 2] : (x[n / 2 - 1] + x[n / 2]) / 2 }
		END {
			for (i = 1; i <= r; i++) { if (br["B", i] > br["A", i]) wb++; if (cr["B", i] > cr["A", i]) wc++ }
			ba = med(b, "A", nb["A"]); bb = med(b, "B", nb["B"]); ca = med(c, "A", nc["A"]); cb = med(c, "B", nc["B"])
			printf "%s: %d rounds; bench A %.2f B %.2f (B ahead in %d); chat A %.2f B %.2f (B ahead in %d); chat/bench A %.3f B %.3f", f, r, ba, bb, wb, ca, cb, wc, ca / ba, cb / bb
			if (ncu["A"]) printf "; client CPU a token A %.3f B %.3f ms", med(cu, "A", ncu["A"]), med(cu, "B", ncu["B"])
			printf "\n" }' "$f"
done
