#!/usr/bin/env python3
# Issue #37's table from call.sh's run.log (and memory.log): python3 table.py run.log [memory.log]
# Whisper: wall seconds of each process; Hark's runs count only when its text equals the kit reference's (OK);
#   cells are the mean of the runs (the method: mean of 2 runs; with more rounds, the mean of all), the
#   second table gives medians and the first two rounds' means. Ratio = Hark's time / whisper.cpp's (lower is better).
# LLM: each run's -r 3 mean tok/s; only rounds in which both tools ran (paired); cells are the medians over the
#   rounds (as round 31's table.py). Ratio = Hark / llama.cpp (higher is better).
# Scaling 2 -> 16 threads: Whisper on the means and on the medians of the times; decode (tg128) on the medians.
# Memory: TestPackedModelMemory's "+X MB = R x (file+KV)" lines.
import re, sys, collections, statistics as st

W = collections.defaultdict(dict)   # (tool, T) -> {round: seconds}
L = collections.defaultdict(dict)   # (tool, T, test) -> {round: tok/s}
bad = collections.Counter(); s0 = []
for l in open(sys.argv[1]):
    m = re.match(r'RESULT (\S+) T=(\d+) round=(\d+) ([\d.]+)s (\S+)', l)
    if m:
        tool, T, r, t, ok = m[1], int(m[2]), int(m[3]), float(m[4]), m[5]
        if tool == 'hark' and ok != 'OK':
            bad[(tool, T)] += 1; continue
        W[(tool, T)][r] = t
    m = re.match(r'RUN T=(\d+) F=\d+ round=(\d+) (\S+): (.*)', l)
    if m:
        for test, v in re.findall(r'(pp512|tg128) t=\d+ t/s: ([\d. ]+)', m[4]):
            L[(m[3], int(m[1]), test)][int(m[2])] = st.mean(float(x) for x in v.split())
    if re.match(r'cpu +\d', l): s0.append([int(x) for x in l.split()[1:]])
Ts = sorted({k[1] for k in W} | {k[1] for k in L})
nan = float('nan')
def mean(d): return st.mean(d.values()) if d else nan
def med(d): return st.median(d.values()) if d else nan
def paired(T, test):
    a, c = L[('hark', T, test)], L[('llama', T, test)]
    rs = [r for r in a if r in c]
    return [a[r] for r in rs], [c[r] for r in rs]
def f(x, p=2): return '-' if x != x else '%.*f' % (p, x)

if len(s0) >= 2:
    dl = [b - a for a, b in zip(s0[0], s0[-1])]; tot = sum(dl) or 1
    print('cpu time over the timed part: user %.1f%% system %.1f%% idle %.1f%% iowait %.2f%% steal %.2f%%'
          % tuple(100 * dl[i] / tot for i in (0, 2, 3, 4, 7)))
print('| threads | Hark Whisper | whisper.cpp | ratio | Hark tg128 | llama.cpp tg128 | ratio | Hark pp512 | llama.cpp pp512 | ratio |')
print('|---|---|---|---|---|---|---|---|---|---|')
cell = {}
for T in Ts:
    hw, ww = mean(W[('hark', T)]), mean(W[('whisper.cpp', T)])
    row = ['%d' % T, f(hw) + (' s' if hw == hw else ''), f(ww) + (' s' if ww == ww else ''), '**%s**' % f(hw / ww)]
    for test in ('tg128', 'pp512'):
        a, c = paired(T, test)
        ma, mc = (st.median(a), st.median(c)) if a else (nan, nan)
        cell[(T, test)] = (ma, mc)
        row += [f(ma, 1), f(mc, 1), '**%s**' % f(ma / mc)]
    print('| ' + ' | '.join(row) + ' |')
print()
print('Whisper runs (seconds): | T | tool | runs | mean | median | min-max | mean of rounds 1-2 | by-round ratios Hark/whisper.cpp |')
for T in Ts:
    for tool in ('hark', 'whisper.cpp'):
        d = W[(tool, T)]
        if not d: continue
        q = ''
        if tool == 'hark':
            o = W[('whisper.cpp', T)]
            q = ' '.join('%.3f' % (d[r] / o[r]) for r in sorted(d) if r in o)
        print('| %d | %s | %d%s | %.3f | %.3f | %.3f-%.3f | %s | %s |' % (T, tool, len(d), ' (%d BAD)' % bad[(tool, T)] if bad[(tool, T)] else '',
              mean(d), med(d), min(d.values()), max(d.values()), f(st.mean(d[r] for r in d if r <= 2), 3) if any(r <= 2 for r in d) else '-', q))
print()
print('LLM rounds (paired, -r 3 means): | T | test | rounds | Hark median (min-max) | llama.cpp median (min-max) | by-round ratio median (min-max) |')
for T in Ts:
    for test in ('tg128', 'pp512'):
        a, c = paired(T, test)
        if not a:
            h = list(L[('hark', T, test)].values())
            if h: print('| %d | %s | %d | %.1f (%.1f-%.1f) | no peer | - |' % (T, test, len(h), st.median(h), min(h), max(h)))
            continue
        q = [x / y for x, y in zip(a, c)]
        print('| %d | %s | %d | %.1f (%.1f-%.1f) | %.1f (%.1f-%.1f) | %.3f (%.3f-%.3f) |' % (T, test, len(a), st.median(a), min(a), max(a),
              st.median(c), min(c), max(c), st.median(q), min(q), max(q)))
print()
sc = {}
def scal(tool):
    a, b = W[(tool, 2)], W[(tool, 16)]
    return (mean(a) / mean(b), med(a) / med(b)) if a and b else (nan, nan)
for tool in ('hark', 'whisper.cpp'):
    sc[tool] = scal(tool)
    print('Whisper scaling 2 -> 16 threads, %s: %sx on means, %sx on medians' % (tool, f(sc[tool][0]), f(sc[tool][1])))
for test in ('tg128', 'pp512'):
    if (2, test) in cell and (16, test) in cell:
        (a2, c2), (a16, c16) = cell[(2, test)], cell[(16, test)]
        sc[test] = a16 / a2
        print('%s scaling 2 -> 16 threads (medians of paired rounds): Hark %sx, llama.cpp %sx' % (test, f(a16 / a2), f(c16 / c2)))
mem = []
if len(sys.argv) > 2:
    for l in open(sys.argv[2]):
        m = re.search(r'\(\+([\d.]+) MB = ([\d.]+) × \(file\+KV\), bound ([\d.]+) MB\)', l)
        if m: mem.append((float(m[1]), float(m[2]), float(m[3])))
    print('memory (TestPackedModelMemory): ' + ('; '.join('+%.1f MB = %.3f x (file+KV), bound %.1f MB' % x for x in mem) if mem else 'no result'))
print()
def v(ok): return '-' if ok is None else ('met' if ok else 'MISSED')
def wr(T): return mean(W[('hark', T)]) / mean(W[('whisper.cpp', T)]) if W[('hark', T)] and W[('whisper.cpp', T)] else None
def lr(T, test): x = cell.get((T, test)); return x[0] / x[1] if x and x[0] == x[0] else None
rows = []
for T in (8, 16): rows.append(('Whisper at %d threads <= 1.0x whisper.cpp\'s time' % T, wr(T), lambda x: x <= 1.0))
for T in (2, 4): rows.append(('Whisper at %d threads <= 0.8x' % T, wr(T), lambda x: x <= 0.8))
rows.append(('LLM tg128 >= 1.2x llama.cpp at 2 threads', lr(2, 'tg128'), lambda x: x >= 1.2))
for T in (8, 16): rows.append(('LLM tg128 >= 1.0x at %d threads' % T, lr(T, 'tg128'), lambda x: x >= 1.0))
for T in (2, 16): rows.append(('LLM pp512 >= 1.0x at %d threads' % T, lr(T, 'pp512'), lambda x: x >= 1.0))
rows.append(('Whisper scaling 2 -> 16 >= 3.5x (medians)', sc['hark'][1], lambda x: x >= 3.5))
rows.append(('Whisper scaling 2 -> 16 >= 3.5x (means)', sc['hark'][0], lambda x: x >= 3.5))
rows.append(('decode scaling 2 -> 16 >= 2.5x', sc.get('tg128'), lambda x: x >= 2.5))
rows.append(('memory <= 1.05 x (file + KV) (worst run)', max(x[1] for x in mem) if mem else None, lambda x: x <= 1.05))
print('| issue #37 target | this run | |')
print('|---|---|---|')
for name, x, ok in rows:
    has = x is not None and x == x
    print('| %s | %s | %s |' % (name, '%.3f' % x if has else '-', v(ok(x) if has else None)))
