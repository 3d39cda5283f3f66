#!/usr/bin/env python3
"""Medians of bench/cpu/run.sh's log: python3 bench/cpu/summarize.py run.log

Whisper: median wall time of the runs whose text matched the kit's (BAD runs are counted apart).
LLM: median of every repetition's tok/s (Hark's "samples" line, llama-bench's samples_ts).
Ratios: Whisper Hark time / peer time (below 1 = Hark faster); LLM Hark tok/s / peer tok/s (above 1 = Hark faster).
"""
import re, statistics, sys
from collections import defaultdict

wh = defaultdict(lambda: defaultdict(list))   # (model, T, beam) -> tool -> [s]
bad = defaultdict(int)
llm = defaultdict(dict)                        # (file, T, test) -> tool -> [tok/s]
cur = None
barriers = []
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("BenchmarkDecodeBarriers"):
        barriers.append(" ".join(line.split()))
        continue
    m = re.match(r"RESULT (\S+) (\S+) T=(\d+) beam=(\d+) run=\d+ ([\d.]+)s (\S+)", line)
    if m:
        key = (m[1], int(m[3]), int(m[4]))
        if m[6] == "OK":
            wh[key][m[2]].append(float(m[5]))
        else:
            bad[(key, m[2])] += 1
        continue
    m = re.match(r"== LLM T=(\d+) (\S+) ", line)
    if m:
        cur = (m[2], int(m[1]))
        continue
    m = re.match(r"samples .* (pp\d+|tg\d+) t=(\d+) t/s: (.*)", line)
    if m and cur:
        llm[(cur[0], cur[1], m[1])]["hark"] = [float(x) for x in m[3].split()]
        continue
    m = re.match(r"llama-bench (pp\d+|tg\d+) t=(\d+) mean [\d.]+ samples t/s: (.*)", line)
    if m and cur:
        llm[(cur[0], cur[1], m[1])]["llama.cpp"] = [float(x) for x in m[3].split()]

med = statistics.median
print("Whisper (median s over OK runs; ratio = Hark/peer time)")
for key in sorted(wh, key=lambda k: (k[0], k[2], k[1])):
    h, p = wh[key].get("hark", []), wh[key].get("whisper.cpp", [])
    hs = "%.2f (n=%d)" % (med(h), len(h)) if h else "-"
    ps = "%.2f (n=%d)" % (med(p), len(p)) if p else "-"
    r = "%.2f" % (med(h) / med(p)) if h and p else "-"
    nb = " BAD runs: hark %d, whisper.cpp %d" % (bad[(key, "hark")], bad[(key, "whisper.cpp")]) if bad[(key, "hark")] or bad[(key, "whisper.cpp")] else ""
    print("  %s T=%d beam=%d: hark %s, whisper.cpp %s, ratio %s%s" % (key[0], key[1], key[2], hs, ps, r, nb))
for (key, tool), n in bad.items():
    if key not in wh:
        print("  %s T=%d beam=%d: %s all %d runs BAD" % (key[0], key[1], key[2], tool, n))
print("LLM (median tok/s of 5 repetitions; ratio = Hark/peer tok/s)")
for key in sorted(llm, key=lambda k: (k[0], k[2], k[1])):
    h, p = llm[key].get("hark"), llm[key].get("llama.cpp")
    r = "%.2f" % (med(h) / med(p)) if h and p else "-"
    print("  %s %s T=%d: hark %s, llama.cpp %s, ratio %s" % (key[0].replace("smollm2-135m-shape-v1-L30-", ""), key[2], key[1],
          "%.1f" % med(h) if h else "-", "%.1f" % med(p) if p else "-", r))
tg = {k[1]: med(v["hark"]) for k, v in llm.items() if k[2] == "tg128" and "q8_0" in k[0] and "hark" in v}
tp = {k[1]: med(v["llama.cpp"]) for k, v in llm.items() if k[2] == "tg128" and "q8_0" in k[0] and "llama.cpp" in v}
if 2 in tg and 16 in tg:
    print("Hark decode scaling 2->16: %.2fx" % (tg[16] / tg[2]) + ("; llama.cpp %.2fx" % (tp[16] / tp[2]) if 2 in tp and 16 in tp else ""))
if barriers:
    print("BenchmarkDecodeBarriers (SmolLM2's decoder products, one step; serial = barrier after every dispatch)")
    for b in barriers:
        print("  " + b)
