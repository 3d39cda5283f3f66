# The summary of call1.sh's parser over several logs (a '== ' line that names no timed run ends the run before it).
# usage: python3 summary.py call1-bench.log call2-bench.log
import re, sys, collections
d = collections.OrderedDict(); bw = collections.defaultdict(list); cp = []; cur = None
for l in (l for f in sys.argv[1:] for l in open(f)):
    m = re.match(r'== (hark|llama|llamanograph) (\S+) r(\d)', l)
    if m: cur = (m.group(2), m.group(1)); continue
    if l.startswith('== '): cur = None; continue
    m = re.search(r'copy ([\d.]+) GB/s', l)
    if m: cp.append(float(m.group(1)))
    if cur and re.search(r'tg128 *\|', l):
        c = [x.strip() for x in l.strip().strip('|').split('|')]
        v = [i for i, x in enumerate(c) if '±' in x]
        if v:
            d.setdefault(cur, []).append(float(c[v[0]].split('±')[0]))
            if cur[1] == 'hark' and v[0] + 1 < len(c): bw[cur[0]].append(float(c[v[0] + 1]))
mean = {k: sum(v) / len(v) for k, v in d.items()}
print("%-14s %-13s %s" % ("model", "prog", "rounds / mean / min-max"))
for (t, p), v in d.items():
    print("%-14s %-13s %s / %.1f / %.1f-%.1f" % (t, p, " ".join("%.1f" % x for x in v), mean[(t, p)], min(v), max(v)))
for t in dict.fromkeys(t for t, _ in d):
    for p in ('llama', 'llamanograph'):
        if (t, 'hark') in mean and (t, p) in mean:
            print("%s: hark / %s = %.3f (1.5x = %.1f)" % (t, p, mean[(t, 'hark')] / mean[(t, p)], 1.5 * mean[(t, p)]))
    if bw[t] and cp:
        b = sum(bw[t]) / len(bw[t]); c = sum(cp) / len(cp)
        print("%s: hark weights %.1f GB/s, copy %.1f GB/s (n %d, %.1f-%.1f): %.1f%%" % (t, b, c, len(cp), min(cp), max(cp), 100 * b / c))
