# ncusum.py: summarize ncu --csv --page raw output of BenchmarkGPUBatchStep
# (graphs off). Steps are cut at each embed launch; the last step of each
# row count is summarized per kernel (launches, total and mean duration, and
# any other metric's launch-weighted mean). Usage:
#   python3 ncusum.py FILE.csv [labels...]   (labels name the last groups of 4 steps, oldest first)
#   python3 ncusum.py FILE.csv --skip        (prints "SKIP COUNT" of the last step: launch-skip and -count for a detailed run)
#   python3 ncusum.py FILE.csv --step N [label]  (step N alone, 0 the first)
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1], errors='replace')))
hi = next(i for i, r in enumerate(rows) if r and r[0] == 'ID')
head = rows[hi]; data = [r for r in rows[hi + 1:] if r and r[0].isdigit()]
col = {h: i for i, h in enumerate(head)}
name = lambda r: r[col['Kernel Name']].split('(')[0].replace('hark_', '')
emb = [i for i, r in enumerate(data) if name(r).startswith('embed')]
steps = [data[a:b] for a, b in zip(emb, emb[1:] + [len(data)])]
if len(sys.argv) > 2 and sys.argv[2] == '--skip':
    print(emb[-1], len(data) - emb[-1]); sys.exit()
if len(sys.argv) > 3 and sys.argv[2] == '--step':  # one step by its index (0: the first cut at embed)
    steps = steps[:int(sys.argv[3]) + 1][-1:]
    sys.argv[2:] = sys.argv[4:] or ['step']
labels = sys.argv[2:] or ['last']
KEEP = ['gpu__time_duration.sum', 'dram__throughput.avg.pct_of_peak_sustained_elapsed', 'sm__throughput.avg.pct_of_peak_sustained_elapsed',
        'sm__warps_active.avg.pct_of_peak_sustained_active', 'dram__bytes_read.sum', 'lts__t_bytes.sum', 'launch__grid_size', 'launch__block_size',
        'launch__registers_per_thread']
mets = [h for h in KEEP if h in col]
short = {'dram__throughput.avg.pct_of_peak_sustained_elapsed': 'dram %', 'sm__throughput.avg.pct_of_peak_sustained_elapsed': 'sm %',
         'sm__warps_active.avg.pct_of_peak_sustained_active': 'warps act %', 'dram__bytes_read.sum': 'dram KB', 'lts__t_bytes.sum': 'L2 KB',
         'launch__grid_size': 'grid', 'launch__block_size': 'block', 'launch__registers_per_thread': 'regs'}
div = {'dram__bytes_read.sum': 1e3, 'lts__t_bytes.sum': 1e3}
print(f"{len(data)} launches, {len(steps)} steps cut at embed; metrics: {', '.join(mets)}")
for j, lab in enumerate(labels):
    st = steps[len(steps) - 1 - 4 * (len(labels) - 1 - j)]
    tot = collections.OrderedDict()
    for r in st:
        n = name(r)
        d = tot.setdefault(n, {'n': 0, 'sum': collections.defaultdict(float), 'grid': r[col['Grid Size']] if 'Grid Size' in col else ''})
        d['n'] += 1
        for m in mets:
            try: d['sum'][m] += float(r[col[m]].replace(',', ''))
            except ValueError: pass
    T = sum(d['sum']['gpu__time_duration.sum'] for d in tot.values())
    print(f"\n== {lab}: {len(st)} launches, {T/1e3:.1f} us of kernel time (ncu, serialized)")
    print(f"{'kernel':34s} {'n':>4s} {'us total':>9s} {'us/launch':>9s} " + " ".join(f"{short[m]:>11s}" for m in mets if m != 'gpu__time_duration.sum'))
    for n, d in sorted(tot.items(), key=lambda kv: -kv[1]['sum']['gpu__time_duration.sum']):
        s = d['sum']['gpu__time_duration.sum']
        print(f"{n[:34]:34s} {d['n']:4d} {s/1e3:9.1f} {s/1e3/d['n']:9.2f} " + " ".join(f"{d['sum'][m]/d['n']/div.get(m, 1):11.1f}" for m in mets if m != 'gpu__time_duration.sum'))
    # the products by shape (launch order within a layer: qkv, o, gate|up, down; the last is the logits)
    pr = [r for r in st if name(r).startswith('mat_vec')]
    if len(pr) == 121:
        shp = collections.defaultdict(list)
        for i, r in enumerate(pr):
            shp['logits' if i == 120 else ['qkv', 'o', 'gate|up', 'down'][i % 4]].append([float(r[col[m]].replace(',', '')) for m in mets])
        print("products by shape, a launch: " + "; ".join(f"{k} {sum(x[0] for x in v)/len(v)/1e3:.2f} us" +
              "".join(f", {short[m]} {sum(x[j] for x in v)/len(v)/div.get(m, 1):.1f}" for j, m in enumerate(mets) if j > 0 and m.split('__')[0] in ('dram', 'sm', 'lts')) for k, v in shp.items()))
