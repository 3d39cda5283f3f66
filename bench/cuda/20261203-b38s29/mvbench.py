# mvbench.py: issue #38 round 5 (b38s29). The 16-row step's q8_0 products
# (SmolLM2-135M shape: 30 layers of QKV 960x576, O 576x576, gate|up 3072x576,
# down 576x1536, then the logits 49152x576; repacked q8_0, ~143 MB) timed as
# CUDA-graph replays with events (no profiler floor), per variant of
# mvbench.cu: the step's 121 products in order, and each shape alone (30
# launches over the 30 layers' weights). Each variant is checked against a
# float64 reference (fresh random inputs) and against rows4 (the replica of
# main's kernel). Usage: python3 mvbench.py [out.json]
import json, sys, time
import numpy as np, cupy as cp

src = open(__file__.replace('.py', '.cu')).read()
mod = cp.RawModule(code=src, options=('-std=c++17',))
L, H, FF, V = 30, 576, 1536, 49152
SHAPES = [('qkv', 960, H), ('o', H, H), ('gu', 2 * FF, H), ('down', H, FF)]
rng = np.random.default_rng(20261203)

def rp_sb(k): return ((k // 32) * 2 + 15) & ~15

def make_w(n, k, seed):
    cp.random.seed(seed)
    codes = cp.random.randint(-127, 128, size=(n, k)).astype(cp.int8)
    sc = (cp.random.random((n, k // 32)) * 0.015 + 0.005).astype(cp.float16)
    sb = rp_sb(k)
    buf = cp.zeros((n, sb + k), dtype=cp.uint8)
    buf[:, :(k // 32) * 2] = sc.view(cp.uint8).reshape(n, (k // 32) * 2)
    buf[:, sb:] = codes.view(cp.uint8)
    return buf, codes, sc

def deq(codes, sc):
    n, k = codes.shape
    return codes.astype(cp.float64) * cp.repeat(sc.astype(cp.float64), 32, axis=1)

t0 = time.time()
layers = []
for l in range(L):
    layers.append([make_w(n, k, 1000 * l + i)[0] for i, (_, n, k) in enumerate(SHAPES)])
lm_buf, lm_codes, lm_sc = make_w(V, H, 999)
x576 = cp.asarray(rng.standard_normal((16, H)).astype(np.float32))
x1536 = cp.asarray(rng.standard_normal((16, FF)).astype(np.float32))
out = cp.zeros((16, V), dtype=cp.float32)
cp.cuda.runtime.deviceSynchronize()
print(f"weights made in {time.time()-t0:.1f} s", flush=True)

VARIANTS = {  # name: (kernel, block threads, grid(n, m))
    'rows4': ('rows4', 128, lambda n, m: ((n + 7) // 8, (m + 3) // 4)),
    'rows8': ('rows8', 128, lambda n, m: ((n + 7) // 8, (m + 7) // 8)),
    'rows16': ('rows16', 128, lambda n, m: ((n + 7) // 8, (m + 15) // 16)),
    'mma_k4n1': ('mma_k4n1', 128, lambda n, m: ((n + 7) // 8, 1)),
    'mma_k4n2': ('mma_k4n2', 128, lambda n, m: ((n + 15) // 16, 1)),
    'mma_k2n4': ('mma_k2n4', 64, lambda n, m: ((n + 31) // 32, 1)),
    'mma_k8n1': ('mma_k8n1', 256, lambda n, m: ((n + 7) // 8, 1)),
    'mma_k1n2': ('mma_k1n2', 32, lambda n, m: ((n + 15) // 16, 1)),
    'empty': ('empty', 128, lambda n, m: ((n + 7) // 8, 1)),
}
fn = {v: mod.get_function(kn) for v, (kn, _, _) in VARIANTS.items()}

def launch(v, W, x, n, k, m, s):
    kn, th, grid = VARIANTS[v]
    fn[v](grid(n, m), (th,), (W, x, out, np.int32(n), np.int32(k), np.int32(m), np.int32(k), np.int32(V)))

def xk(k): return x576 if k == H else x1536

def step_seq(v, m, s, which=None):
    if which is None:
        for l in range(L):
            for i, (_, n, k) in enumerate(SHAPES):
                launch(v, layers[l][i], xk(k), n, k, m, s)
        launch(v, lm_buf, x576, V, H, m, s)
    elif which == 'lm':
        for l in range(L): launch(v, lm_buf, x576, V, H, m, s)
    else:
        i = [a for a, _, _ in SHAPES].index(which)
        _, n, k = SHAPES[i]
        for l in range(L): launch(v, layers[l][i], xk(k), n, k, m, s)

def graph_time(v, m, which=None, reps=20, rounds=5):
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        s.begin_capture()
        step_seq(v, m, s, which)
        g = s.end_capture()
    g.upload(s) if hasattr(g, 'upload') else None
    for _ in range(3): g.launch(s)
    s.synchronize()
    ts = []
    for _ in range(rounds):
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        e0.record(s)
        for _ in range(reps): g.launch(s)
        e1.record(s); e1.synchronize()
        ts.append(cp.cuda.get_elapsed_time(e0, e1) * 1e3 / reps)
    return float(np.median(ts)), ts

# correctness: one launch per shape against float64, and against rows4
res = {'check': {}, 'time': {}}
def check(v, m):
    errs = {}
    s = None
    for name, n, k in SHAPES + [('lm', V, H)]:
        if name == 'lm':
            W, codes, sc = lm_buf, lm_codes, lm_sc
        else:
            i = [a for a, _, _ in SHAPES].index(name)
            W, codes, sc = make_w(n, k, 77 + i)
        x = cp.asarray(rng.standard_normal((16, k)).astype(np.float32))
        out[:] = cp.nan
        launch(v, W, x, n, k, m, s)
        cp.cuda.runtime.deviceSynchronize()
        got = out[:m, :n].astype(cp.float64)
        ref = x[:m].astype(cp.float64) @ deq(codes, sc).T
        unwritten = int(cp.isnan(out[:m, :n]).sum())
        rel = float(cp.linalg.norm(got - ref) / cp.linalg.norm(ref))
        mx = float(cp.abs(got - ref).max() / cp.abs(ref).max())
        past = int((~cp.isnan(out[m:, :n])).sum()) if m < 16 else 0
        errs[name] = dict(rel=rel, maxrel=mx, unwritten=unwritten, written_past_m=past)
    return errs

for v in VARIANTS:
    if v == 'empty': continue
    for m in (16, 5):
        res['check'][f'{v}/m={m}'] = check(v, m)
        e = res['check'][f'{v}/m={m}']
        print(f"check {v:9s} m={m:2d}: " + "  ".join(f"{k} {d['rel']:.1e}/{d['maxrel']:.1e}{'' if d['unwritten']==0 and d['written_past_m']==0 else ' BAD %d,%d' % (d['unwritten'], d['written_past_m'])}" for k, d in e.items()), flush=True)

# timings (us): whole step's products, then each shape (per launch)
rows = []
for v, ms in [('empty', [16]), ('rows4', [1, 4, 16]), ('rows8', [16]), ('rows16', [16]), ('mma_k4n1', [16, 4, 1]), ('mma_k4n2', [16]),
              ('mma_k2n4', [16]), ('mma_k8n1', [16]), ('mma_k1n2', [16]), ('rows4', [16]), ('mma_k4n1', [16])]:
    for m in ms:
        r = {'variant': v, 'm': m}
        r['step_us'], r['step_rounds'] = graph_time(v, m)
        for w in ['qkv', 'o', 'gu', 'down', 'lm']:
            t, _ = graph_time(v, m, w, reps=10, rounds=3)
            r[w] = t / L
        rows.append(r)
        print(f"time {v:9s} m={m:2d}: step {r['step_us']:8.1f} us  per launch: " + " ".join(f"{w} {r[w]:6.2f}" for w in ['qkv', 'o', 'gu', 'down', 'lm']), flush=True)
res['time'] = rows
if len(sys.argv) > 1:
    json.dump(res, open(sys.argv[1], 'w'), indent=1)
print("\n| variant | m | 121 products, us | qkv | o | gate-up | down | logits |")
for r in rows:
    print(f"| {r['variant']} | {r['m']} | {r['step_us']:.1f} | {r['qkv']:.2f} | {r['o']:.2f} | {r['gu']:.2f} | {r['down']:.2f} | {r['lm']:.2f} |")
