#!/usr/bin/env python3
"""Long-prompt gaps from a b38s27 run's traces: the server's ($HARK_BATCH_TRACE: submit, recv and step lines)
and the client's (bench serve --token-trace: a line a request, its token arrivals).

For each long prompt (a submit of more than 1,000 tokens) it prints, over the stream requests running then:
the longest gap between two of a stream's tokens as the engine handed them over (recv lines; a recv of n
tokens counts n-1 gaps of 0), against the median of all the streams' handover gaps in that level; and the
longest gap at the client, with the server's handover gaps of the same stretch of time.

usage: gaps.py trace-NAME.log tokens-NAME.log
"""
import statistics, sys

def main(trace, tokens):
    subs, recv, steps = {}, {}, []
    for l in open(trace):
        f = l.split()
        if not f:
            continue
        if f[0] == "submit":
            kv = dict(x.split("=") for x in f[2:])
            subs[int(kv["id"])] = (int(f[1]), int(kv["prompt"]))
        elif f[0] == "recv":
            recv.setdefault(int(f[1]), []).append((int(f[2]), int(f[3].split("=")[1])))
        elif f[0] == "step":
            steps.append((int(f[1]), int(f[2]), l.strip()))
    client = [list(map(int, l.split()[2:])) for l in open(tokens) if l.startswith("tokens")]
    longs = sorted((t, i) for i, (t, n) in subs.items() if n > 1000)
    for t0, lid in longs:
        # the level: requests submitted between the previous long prompt's end and the next
        ids = [i for i, (t, n) in subs.items() if n <= 1000 and i in recv and recv[i][0][0] < t0 < recv[i][-1][0]]
        if not ids:
            continue  # calibration's long prompts: no stream runs beside them
        gaps, after = [], []
        for i in ids:
            r = recv[i]
            for (a, _), (b, n) in zip(r, r[1:]):
                gaps.append(b - a)
                gaps += [0] * (n - 1)
                if b > t0:
                    after.append((b - a, i, b, n))
        med = statistics.median(gaps)
        worst = max(after)
        print(f"long prompt id {lid} submitted at {t0}: {len(ids)} streams running, {len(after)} handover gaps after it")
        print(f"  server handover: longest {worst[0]/1e3:.2f} ms (request {worst[1]}, ended {worst[2]}), median {med/1e3:.2f} ms: {worst[0]/med:.2f}x")
        twos = sum(1 for g in after if g[3] > 1)
        print(f"  handovers of 2+ tokens at once after it: {twos}")
        # the client: gaps after t0 among streams that ran then
        cg = []
        for c in client:
            if not c[0] < t0 < c[-1]:
                continue  # not a stream running beside this long prompt
            for a, b in zip(c, c[1:]):
                if b > t0:
                    cg.append((b - a, a, b))
        if cg:
            g, a, b = max(cg)
            print(f"  client: longest {g/1e3:.2f} ms ({a} -> {b}); the steps that ended in it:")
            for s0, d, l in steps:
                if a - 4000 < s0 + d < b + 500:
                    print(f"    {s0 + d - a:+7d} {l[:110]}")
            near = [(t, n, i) for i in ids for t, n in recv[i] if a - 3000 < t < b + 3000]
            print("    server handovers near it (µs from its start, tokens, request):", sorted((t - a, n, i) for t, n, i in near))

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
