#!/usr/bin/env python3
"""Summarizes a dev-ab.sh log: per side the median of the runs' mean t/s and of their process CPU seconds,
and the per-round ratios B/A (t/s; CPU seconds), with how many rounds B was ahead."""
import re, statistics as st, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"round (\d+) ([AB]): samples .*? t/s: ([\d. ]+)\|cpu ([\d.]+) ([\d.]+)\|", line)
    if m:
        ts = [float(x) for x in m.group(3).split()]
        runs[(int(m.group(1)), m.group(2))] = (st.mean(ts), float(m.group(4)) + float(m.group(5)))
rounds = sorted({r for r, _ in runs if (r, "A") in runs and (r, "B") in runs})
for s in "AB":
    v = [runs[(r, s)] for r in rounds]
    print(f"{s}: {len(v)} runs, median t/s {st.median(x[0] for x in v):.2f}, median CPU s {st.median(x[1] for x in v):.2f}")
rt = [runs[(r, "B")][0] / runs[(r, "A")][0] for r in rounds]
rc = [runs[(r, "B")][1] / runs[(r, "A")][1] for r in rounds]
print("B/A t/s by round:", " ".join(f"{x:.3f}" for x in rt))
print(f"B/A t/s: median {st.median(rt):.3f}, B ahead in {sum(x > 1 for x in rt)} of {len(rt)}; "
      f"ratio of medians {st.median(runs[(r,'B')][0] for r in rounds) / st.median(runs[(r,'A')][0] for r in rounds):.3f}")
print("B/A CPU s by round:", " ".join(f"{x:.3f}" for x in rc), f"median {st.median(rc):.3f}")
