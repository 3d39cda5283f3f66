// The sampler (plan.Sample) in one threadgroup, so decode never reads the
// logits back: logit_bias, penalties from the sequence's token counts,
// temperature, top-k, softmax, top-p, min-p and the seeded draw with
// u = plan.Uniform(seed, step); then the drawn token is counted and its
// logprobs written when asked. The settings are step data the host writes
// per generation (plan.SampleSettings, word offsets below).
//
// Every cut and the draw are decided by walking the vocabulary in the
// contract's order (descending scaled logit, ties to the lower id). The
// walk never needs the whole order, only its head, so the order is
// produced window by window: a window is the tokens whose logit lies in a
// key range [lo, hi) (keys are the logits' bits mapped to a monotone
// uint) holding at most SMP_CAP tokens, the widest below the previous
// window (by a radix walk over the keys' bytes, smp_window_lo; the first
// tries the tokens within 10 of the top);
// its tokens are gathered into threadgroup memory, bitonic-sorted and
// walked in parallel (runs per thread, prefix sums, an atomic min of the
// deciding token). One window nearly always decides everything; flat
// distributions take more. A run of more than SMP_CAP equal logits is
// walked by thread 0 without sorting (equal logits are in id order) and
// its tokens found by rank.
//
// The walk runs as up to three phases, each from the top of the order:
//   A (top-k only) the mass z of the top k;
//   B (a cut is set) the kept count: top-k, min-p, top-p as the CPU;
//   C the draw: the first kept token whose cumulative mass exceeds u·mass.
// Masses are 64-bit fixed point with 43 fraction bits: each token's
// exp(l−lmax) is computed in integer arithmetic to ~1e-15 (smp_exp_fx; a
// float32 exp would be off by ~1e-7, enough to move a draw to a
// neighbouring token about once in a thousand draws), and sums are exact
// and order-independent (the CPU sums float64 exps). Integer arithmetic is
// also immune to fast math. Divisions are the precise ones, so the order
// itself is the CPU's.
//
// Scratch (bind 4): [0, n) the adjusted logits.

enum : uint {
    SMP_CAP = 2048,   // tokens per sorted window (16 KiB)
    SMP_MAXT = 1024,  // threads per threadgroup at most
};
// Word offsets of plan.SampleSettings (plan.SampleSet*; checked by
// shaders' TestSampleSettingsLayout).
enum : uint {
    SMP_SET_TOPK = 0,
    SMP_SET_TOPP = 1,
    SMP_SET_MINP = 2,
    SMP_SET_TEMP = 3,
    SMP_SET_REPEAT = 4,
    SMP_SET_PRESENCE = 5,
    SMP_SET_FREQUENCY = 6,
    SMP_SET_SEED_LO = 7,
    SMP_SET_SEED_HI = 8,
    SMP_SET_LOGPROBS = 9,
    SMP_SET_NBIAS = 10,
    SMP_SET_BIAS = 16,
    SMP_MAX_BIAS = 300,
    SMP_MAX_TOP = 20,
    SMP_LP_WORDS = 41,
};
constant float SMP_FX = 8796093022208.0f; // 2^43: a mass ≤ 1 per token, n ≤ 2^20 tokens fit 64 bits

// smp_mulshift is (a·b) >> s for s in [1, 64], through 32-bit limbs (the
// 128-bit product is not a type MSL has).
static inline ulong smp_mulshift(ulong a, ulong b, uint s) {
    const ulong a0 = a & 0xffffffffu;
    const ulong a1 = a >> 32;
    const ulong b0 = b & 0xffffffffu;
    const ulong b1 = b >> 32;
    const ulong p00 = a0 * b0;
    const ulong p01 = a0 * b1;
    const ulong p10 = a1 * b0;
    const ulong p11 = a1 * b1;
    const ulong mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    const ulong lo = (mid << 32) | (p00 & 0xffffffffu);
    const ulong hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    return s == 64 ? hi : (hi << (64 - s)) | (lo >> s);
}

// smp_exp2_tab[j] is 2^(j/16) in Q62.
constant ulong smp_exp2_tab[16] = {
    0x4000000000000000ul, 0x42d561b3e6243d8aul, 0x45cae0f1f545eb73ul, 0x48e1e9b9d588e19bul,
    0x4c1bf828c6dc54b8ul, 0x4f7a993048d088d7ul, 0x52ff6b54d8a89c75ul, 0x56ac1f752150a563ul,
    0x5a827999fcef3242ul, 0x5e8451cfac061b5ful, 0x62b39508aa836d6ful, 0x6712460a8fc24072ul,
    0x6ba27e656b4eb57aul, 0x70666f76154a7089ul, 0x75606373ee921c97ul, 0x7a92be8a92436616ul,
};

// smp_exp_fx is round(exp(d)·2^43) for d ≤ 0 (0 below −32, where it
// rounds to 0 anyway). exp(d) = 2^−k·2^(j/16)·exp(g): −d·log2 e in Q52
// from the exact −d·2^52, k its ceiling, j the top 4 bits of the
// fraction f = k − (−d·log2 e), g the rest times ln 2 (< 0.044), exp(g) by
// a 9-term Taylor series in Q62 (the dropped terms are below 2^-66).
static inline ulong smp_exp_fx(float d) {
    if (!(d > -32.0f)) {
        return 0; // also −inf
    }
    if (d >= 0.0f) {
        return 1ul << 43;
    }
    const ulong A = ulong(-d * 4503599627370496.0f);            // −d·2^52 (exact for |d| ≥ 2^-29)
    const ulong Y = smp_mulshift(A, 0x5c551d94ae0bf85eul, 62);  // ·log2 e (Q62 constant): Q52
    const ulong kq = (Y + ((1ul << 52) - 1)) >> 52;              // k = ceil(−d·log2 e)
    const ulong F = (kq << 52) - Y;                              // f in Q52, [0, 1)
    const ulong G = smp_mulshift(F & ((1ul << 48) - 1), 0x2c5c85fdf473de6bul, 52); // g, Q62
    ulong R = 1ul << 62;
    for (uint i = 9; i >= 1; i--) {
        R = (1ul << 62) + smp_mulshift(R, G, 62) / i; // Horner: 1 + g·R/i
    }
    R = smp_mulshift(R, smp_exp2_tab[F >> 48], 62);
    const uint sh = 19 + uint(kq); // Q62 → Q43, then 2^−k
    if (sh >= 64) {
        return 0;
    }
    return (R + (1ul << (sh - 1))) >> sh;
}

// smp_mul24 is floor(a·k / 2^24) for k < 2^24 without overflow.
static inline ulong smp_mul24(ulong a, uint k) { return (a >> 24) * k + (((a & 0xffffffu) * k) >> 24); }

// smp_frac is floor(a·f) for f in [0, 1), f taken to 32 fraction bits
// (exact for f ≥ 2^-8).
static inline ulong smp_frac(ulong a, float f) {
    const ulong k = ulong(rint(max(f, 0.0f) * 4294967296.0f));
    return (a >> 32) * k + (((a & 0xffffffffu) * k) >> 32);
}

// smp_div is a correctly rounded division, as the CPU's, even when the
// library is built with fast math (where a/b is approximate). The MSL
// executor's C++ division is already exact.
static inline float smp_div(float a, float b) {
#ifdef __METAL_VERSION__
    return precise::divide(a, b);
#else
    return a / b;
#endif
}

static inline bool smp_isnan(float v) { return (as_type<uint>(v) & 0x7fffffffu) > 0x7f800000u; }
static inline bool smp_isinf(float v) { return (as_type<uint>(v) & 0x7fffffffu) == 0x7f800000u; }

// smp_key maps a (non-NaN, non −0) float to a uint of the same order.
static inline uint smp_key(float v) {
    const uint b = as_type<uint>(v);
    return (b & 0x80000000u) != 0 ? ~b : (b | 0x80000000u);
}

static inline float smp_unkey(uint k) {
    return as_type<float>((k & 0x80000000u) != 0 ? (k & 0x7fffffffu) : ~k);
}

// smp_uniform24 is plan.Uniform·2^24: splitmix64 of seed +
// (step+1)·golden, top 24 bits.
static inline uint smp_uniform24(ulong seed, ulong step) {
    ulong z = seed + (step + 1) * 0x9E3779B97F4A7C15ul;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ul;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBul;
    z ^= z >> 31;
    return uint(z >> 40);
}

struct SmpShared {
    float red_f[32];
    uint red_u[32];
    int red_i[32];
    float win_l[SMP_CAP];
    int win_id[SMP_CAP];
    uint sel[SMP_MAXT];
    ulong red_l[SMP_MAXT];
    ulong sgsum[32];
};

static inline float smp_max_f(float v, threadgroup SmpShared& sh, uint lane, uint sg, uint nsg) {
    v = simd_max(v);
    if (lane == 0) {
        sh.red_f[sg] = v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float r = sh.red_f[0];
    for (uint i = 1; i < nsg; i++) {
        r = max(r, sh.red_f[i]);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return r;
}

static inline uint smp_sum_u(uint v, threadgroup SmpShared& sh, uint lane, uint sg, uint nsg) {
    v = simd_sum(v);
    if (lane == 0) {
        sh.red_u[sg] = v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    uint r = 0;
    for (uint i = 0; i < nsg; i++) {
        r += sh.red_u[i];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return r;
}

// smp_best reduces every thread's (v, i) (i < 0: none) to the
// threadgroup's best: the largest v, ties to the lowest i.
static inline void smp_best(thread float& v, thread int& i, threadgroup SmpShared& sh, uint lane, uint sg,
                            uint nsg) {
    for (ushort off = 16; off > 0; off >>= 1) {
        const float ov = simd_shuffle_xor(v, off);
        const int oi = simd_shuffle_xor(i, off);
        if (oi >= 0 && (i < 0 || ov > v || (ov == v && oi < i))) {
            v = ov;
            i = oi;
        }
    }
    if (lane == 0) {
        sh.red_f[sg] = v;
        sh.red_i[sg] = i;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    v = 0.0f;
    i = -1;
    for (uint s = 0; s < nsg; s++) {
        const float ov = sh.red_f[s];
        const int oi = sh.red_i[s];
        if (oi >= 0 && (i < 0 || ov > v || (ov == v && oi < i))) {
            v = ov;
            i = oi;
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
}

// smp_argmax is the first index of the largest l (l holds no NaN).
static inline int smp_argmax(device const float* l, uint n, threadgroup SmpShared& sh, uint tid, uint ntg,
                             uint lane, uint sg, uint nsg) {
    float v = 0.0f;
    int i = -1;
    for (uint j = tid; j < n; j += ntg) {
        if (i < 0 || l[j] > v) {
            v = l[j];
            i = int(j);
        }
    }
    smp_best(v, i, sh, lane, sg, nsg);
    return max(i, 0);
}

static inline float smp_sum_f(float v, threadgroup SmpShared& sh, uint lane, uint sg, uint nsg) {
    v = simd_sum(v);
    if (lane == 0) {
        sh.red_f[sg] = v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float r = 0.0f;
    for (uint i = 0; i < nsg; i++) {
        r += sh.red_f[i];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return r;
}

// smp_logprob is logit v's log-softmax given the normaliser lse (NaN
// counts as −inf; an infinite lse leaves 0 for its equals).
static inline float smp_logprob(float v, float lse) {
    if (smp_isnan(v)) {
        return -INFINITY;
    }
    if (smp_isinf(lse)) {
        return v == lse ? 0.0f : -INFINITY;
    }
    return v - lse;
}

// smp_logprobs writes the logprobs record but its first word (the drawn
// token's, smp_finish writes it) and returns the normaliser lse of the
// raw logits: the top tokens are found one per round, each the best that
// comes after the previous one in the order (descending logit, ties to
// the lower id).
static inline float smp_logprobs(device const float* x, uint n, uint top, device float* lpo,
                                 threadgroup SmpShared& sh, uint tid, uint ntg, uint lane, uint sg, uint nsg) {
    float m = -INFINITY;
    for (uint i = tid; i < n; i += ntg) {
        const float v = x[i];
        if (!smp_isnan(v)) {
            m = max(m, v);
        }
    }
    const float xm = smp_max_f(m, sh, lane, sg, nsg);
    float zs = 0.0f;
    if (!smp_isinf(xm)) {
        for (uint i = tid; i < n; i += ntg) {
            const float v = x[i];
            if (!smp_isnan(v)) {
                zs += exp(v - xm);
            }
        }
    }
    const float z = smp_sum_f(zs, sh, lane, sg, nsg);
    const float lse = smp_isinf(xm) ? xm : xm + log(z);
    if (tid == 0) {
        for (uint i = 0; i < SMP_LP_WORDS; i++) {
            lpo[i] = 0.0f;
        }
    }
    float pv = INFINITY;
    int pid = -1;
    for (uint r = 0; r < top; r++) {
        float bv = 0.0f;
        int bi = -1;
        for (uint j = tid; j < n; j += ntg) {
            const float v = smp_isnan(x[j]) ? -INFINITY : x[j];
            const bool after = pid < 0 || v < pv || (v == pv && int(j) > pid);
            if (after && (bi < 0 || v > bv)) {
                bv = v;
                bi = int(j);
            }
        }
        smp_best(bv, bi, sh, lane, sg, nsg);
        if (bi < 0) {
            break;
        }
        if (tid == 0) {
            lpo[1 + 2 * r] = as_type<float>(bi);
            lpo[2 + 2 * r] = smp_logprob(bv, lse);
        }
        pv = bv;
        pid = bi;
    }
    return lse;
}

// smp_finish (thread 0) writes the drawn token, counts it, and writes its
// logprob when asked.
static inline void smp_finish(int tok, device int* out, device int* counts, bool hasCounts, uint n,
                              device float* lpo, bool hasLp, device const float* x, float lse) {
    *out = tok;
    if (hasCounts) {
        if (counts[tok] <= 0) {
            counts[tok] = 0;
            const int d = counts[n];
            if (d >= 0 && uint(d) < n) {
                counts[n + 1 + uint(d)] = tok;
                counts[n] = d + 1;
            }
        }
        counts[tok] += 1;
    }
    if (hasLp) {
        lpo[0] = smp_logprob(x[tok], lse);
    }
}

// smp_count is the number of tokens with key in [lo, hi).
static inline uint smp_count(device const float* l, uint n, uint lo, uint hi, threadgroup SmpShared& sh, uint tid,
                             uint ntg, uint lane, uint sg, uint nsg) {
    uint c = 0;
    for (uint j = tid; j < n; j += ntg) {
        const uint k = smp_key(l[j]);
        c += (k >= lo && k < hi) ? 1u : 0u;
    }
    return smp_sum_u(c, sh, lane, sg, nsg);
}

// smp_window_lo is the smallest lo with at most SMP_CAP tokens of key in
// [lo, hi), given more than SMP_CAP below hi: the bound a bisection over
// the key would find, by a radix walk over the key's bytes from the top
// (4 passes over the logits instead of ~32 counts; flat distributions need
// a new window often). lo == hi: more than SMP_CAP tokens of key hi−1.
// res (2 words) passes thread 0's choice on.
static inline uint smp_window_lo(device const float* l, uint n, uint hi, threadgroup atomic_uint* hist,
                                 threadgroup uint* res, uint tid, uint ntg) {
    uint base = 0;  // the key bits above this level's byte, fixed so far
    uint above = 0; // tokens with key in [the end of base's bucket, hi)
    for (int shift = 24; shift >= 0; shift -= 8) {
        for (uint i = tid; i < 256; i += ntg) {
            atomic_store_explicit(&hist[i], 0u, memory_order_relaxed);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        const uint fixed = shift == 24 ? 0u : ~((1u << uint(shift + 8)) - 1u);
        for (uint j = tid; j < n; j += ntg) {
            const uint k = smp_key(l[j]);
            if (k < hi && (k & fixed) == base) {
                atomic_fetch_add_explicit(&hist[(k >> uint(shift)) & 255u], 1u, memory_order_relaxed);
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (tid == 0) {
            // from the top byte down, the first whose tokens, with those
            // above, exceed the window: lo lies just above one of its keys
            uint c = above;
            uint b = 255;
            uint hb = atomic_load_explicit(&hist[b], memory_order_relaxed);
            while (c + hb <= SMP_CAP && b > 0) {
                c += hb;
                b--;
                hb = atomic_load_explicit(&hist[b], memory_order_relaxed);
            }
            res[0] = base | (b << uint(shift));
            res[1] = c;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        base = res[0];
        above = res[1];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    return base + 1;
}

// smp_before: token (la, ia) comes before (lb, ib) in the order.
static inline bool smp_before(float la, int ia, float lb, int ib) { return la > lb || (la == lb && ia < ib); }

// smp_select returns the id of the r-th token (0-based, in id order) whose
// key is k: per-thread counts over contiguous id ranges, a serial prefix,
// then the owning thread scans its range.
static inline int smp_select(device const float* l, uint n, uint k, uint r, threadgroup SmpShared& sh,
                             threadgroup int* res, uint tid, uint ntg) {
    const uint per = (n + ntg - 1) / ntg;
    const uint a = min(tid * per, n);
    const uint b = min(a + per, n);
    uint c = 0;
    for (uint j = a; j < b; j++) {
        c += smp_key(l[j]) == k ? 1u : 0u;
    }
    sh.sel[tid] = c;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tid == 0) {
        uint acc = 0;
        for (uint i = 0; i < ntg; i++) {
            const uint ci = sh.sel[i];
            sh.sel[i] = acc;
            acc += ci;
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const uint start = sh.sel[tid];
    if (r >= start && r < start + c) {
        uint seen = start;
        for (uint j = a; j < b; j++) {
            if (smp_key(l[j]) == k) {
                if (seen == r) {
                    *res = int(j);
                    break;
                }
                seen++;
            }
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return *res;
}

// Walk state, written by thread 0 only (between barriers).
struct SmpWalk {
    uint rank;   // tokens of the order consumed in this phase
    ulong cum;   // their mass (fixed point)
    uint done;   // the phase is decided
    int last;    // id of the last consumed token (phase C)
    uint hi;     // exclusive key bound of the next window
    uint wlo;    // cached sorted window: [wlo, whi) with wc tokens
    uint whi;
    uint wc;
    uint tie;    // the last window was a run of equal logits (no sort)
    uint tieUse; // phase C: tokens of that run consumed
};

// Walk state crosses address spaces field by field.
static inline SmpWalk smp_load(threadgroup SmpWalk& s) {
    SmpWalk w;
    w.rank = s.rank;
    w.cum = s.cum;
    w.done = s.done;
    w.last = s.last;
    w.hi = s.hi;
    w.wlo = s.wlo;
    w.whi = s.whi;
    w.wc = s.wc;
    w.tie = s.tie;
    w.tieUse = s.tieUse;
    return w;
}

static inline void smp_store(threadgroup SmpWalk& s, thread const SmpWalk& w) {
    s.rank = w.rank;
    s.cum = w.cum;
    s.done = w.done;
    s.last = w.last;
    s.hi = w.hi;
    s.wlo = w.wlo;
    s.whi = w.whi;
    s.wc = w.wc;
    s.tie = w.tie;
    s.tieUse = w.tieUse;
}

// smp_step advances phase ph by one token of mass ev; it returns true when
// the phase is decided (the token is consumed unless the bound was hit
// before it: *took says).
static inline bool smp_step(uint ph, thread SmpWalk& w, ulong ev, uint K, ulong minPfx, ulong topPz, uint keep,
                            ulong target, thread bool& took) {
    took = false;
    if (ph == 0) { // A: mass of the top K
        if (w.rank == K) {
            return true;
        }
        w.cum += ev;
        w.rank++;
        took = true;
        return false;
    }
    if (ph == 1) { // B: kept count
        if (w.rank == K) {
            return true;
        }
        if (w.rank > 0 && ev < minPfx) {
            return true;
        }
        w.cum += ev;
        w.rank++;
        took = true;
        return w.cum >= topPz;
    }
    // C: draw
    if (w.rank == keep) {
        return true;
    }
    w.cum += ev;
    w.rank++;
    took = true;
    return w.cum > target;
}

kernel void sample(device const float* x [[buffer(0)]],
                   device int* out [[buffer(1)]],
                   device const uint* settings [[buffer(2)]],
                   device int* counts [[buffer(3)]],
                   device float* scratch [[buffer(4)]],
                   device float* lpo [[buffer(5)]],
                   constant Args& args [[buffer(8)]],
                   uint tid [[thread_position_in_threadgroup]],
                   uint ntg [[threads_per_threadgroup]],
                   uint lane [[thread_index_in_simdgroup]],
                   uint sg [[simdgroup_index_in_threadgroup]],
                   uint nsg [[simdgroups_per_threadgroup]]) {
    threadgroup SmpShared sh;
    threadgroup SmpWalk ws;
    threadgroup atomic_uint wcount;
    threadgroup atomic_uint wstop;
    threadgroup atomic_uint whist[256]; // smp_window_lo's histogram
    threadgroup int selRes;

    const uint n = args.sample.n;
    const ulong step = args.sample.step;
    const uint topK = settings[SMP_SET_TOPK];
    const float topP = as_type<float>(settings[SMP_SET_TOPP]);
    const float minP = as_type<float>(settings[SMP_SET_MINP]);
    const float temp = as_type<float>(settings[SMP_SET_TEMP]);
    const float rep = as_type<float>(settings[SMP_SET_REPEAT]);
    const float pres = as_type<float>(settings[SMP_SET_PRESENCE]);
    const float freq = as_type<float>(settings[SMP_SET_FREQUENCY]);
    const ulong seed = ulong(settings[SMP_SET_SEED_LO]) | (ulong(settings[SMP_SET_SEED_HI]) << 32);
    const uint lpReq = settings[SMP_SET_LOGPROBS];
    const uint nBias = min(settings[SMP_SET_NBIAS], uint(SMP_MAX_BIAS));
    const bool hasCounts = has_bind(args, SAMPLE_COUNTS);
    const bool hasLp = lpReq > 0 && has_bind(args, SAMPLE_LOGPROBS);
    device float* l = scratch;

    float lse = 0.0f;
    if (hasLp) {
        lse = smp_logprobs(x, n, min(lpReq - 1, uint(SMP_MAX_TOP)), lpo, sh, tid, ntg, lane, sg, nsg);
    }

    for (uint i = tid; i < n; i += ntg) {
        const float v = x[i];
        l[i] = smp_isnan(v) ? -INFINITY : v;
    }
    threadgroup_barrier(mem_flags::mem_device);

    // 1. logit_bias (distinct ids: one thread each)
    if (nBias > 0) {
        for (uint i = tid; i < nBias; i += ntg) {
            const uint id = settings[SMP_SET_BIAS + 2 * i];
            if (id < n) {
                l[id] += as_type<float>(settings[SMP_SET_BIAS + 2 * i + 1]);
            }
        }
        threadgroup_barrier(mem_flags::mem_device);
    }

    // 2. penalties: one thread per distinct counted token
    const bool penRep = rep != 0.0f && rep != 1.0f;
    if (hasCounts && (penRep || pres != 0.0f || freq != 0.0f)) {
        const uint d = uint(clamp(counts[n], 0, int(n)));
        for (uint i = tid; i < d; i += ntg) {
            const int id = counts[n + 1 + i];
            if (id < 0 || uint(id) >= n || counts[id] <= 0) {
                continue;
            }
            const uint cnt = uint(counts[id]);
            float v = l[id];
            if (penRep) {
                v = v > 0.0f ? smp_div(v, rep) : v * rep;
            }
            v -= pres + float(cnt) * freq;
            l[id] = v;
        }
        threadgroup_barrier(mem_flags::mem_device);
    }

    // 3. temperature (temp <= 0 or NaN: argmax)
    if (!(temp > 0.0f)) {
        const int best = smp_argmax(l, n, sh, tid, ntg, lane, sg, nsg);
        if (tid == 0) {
            smp_finish(best, out, counts, hasCounts, n, lpo, hasLp, x, lse);
        }
        return;
    }
    float lm = -INFINITY;
    for (uint i = tid; i < n; i += ntg) {
        float v = smp_div(l[i], temp);
        if (as_type<uint>(v) == 0x80000000u) {
            v = 0.0f; // −0 ties with +0 in the order; one key for both
        }
        l[i] = v;
        lm = max(lm, v);
    }
    threadgroup_barrier(mem_flags::mem_device);
    const float lmax = smp_max_f(lm, sh, lane, sg, nsg);
    if (smp_isinf(lmax)) {
        // all −inf, or some +inf: the first maximum
        const int best = smp_argmax(l, n, sh, tid, ntg, lane, sg, nsg);
        if (tid == 0) {
            smp_finish(best, out, counts, hasCounts, n, lpo, hasLp, x, lse);
        }
        return;
    }

    // 4. the normaliser over the whole vocabulary (the kept mass when
    // nothing is cut, the top-p reference without top-k)
    const uint u24 = smp_uniform24(seed, step);
    const uint K = (topK > 0 && topK < n) ? topK : n;
    const bool noCut = K == n && topP >= 1.0f && minP <= 0.0f;
    // min-p in fixed point: ev < minP ⇔ ev_fx < ceil(minP·2^43); 0 = off
    // (past 1 every token but the first is cut, ties at the top too)
    const ulong minPfx = minP > 0.0f ? ulong(ceil(min(minP, 2.0f) * SMP_FX)) : 0ul;
    ulong z = 0;
    if (K == n) {
        ulong zs = 0;
        for (uint i = tid; i < n; i += ntg) {
            zs += smp_exp_fx(l[i] - lmax);
        }
        // 64-bit sums through threadgroup memory (no 64-bit SIMD-group
        // functions): lane 0 of each SIMD-group adds its lanes' sums into
        // its first slot, then every thread adds the SIMD-groups'.
        sh.red_l[tid] = zs;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (lane == 0) {
            ulong a = 0;
            for (uint i = 0; i < 32; i++) {
                a += sh.red_l[sg * 32 + i];
            }
            sh.red_l[sg * 32] = a;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint i = 0; i < nsg; i++) {
            z += sh.red_l[i * 32];
        }
    }
    uint keep = n;
    ulong mass = z;
    if (tid == 0) {
        ws.whi = 0;
        ws.wlo = 0;
        ws.wc = 0;
        ws.tie = 0;
        ws.tieUse = 0;
    }

    // phases: 0 (A) only with top-k, 1 (B) only with a cut, 2 (C) always
    for (uint ph = K < n ? 0u : (noCut ? 2u : 1u); ph < 3; ph++) {
        const ulong target = smp_mul24(mass, u24);
        const ulong topPz = topP < 1.0f ? smp_frac(z, topP) : ~0ul;
        if (tid == 0) {
            ws.rank = 0;
            ws.cum = 0;
            ws.done = 0;
            ws.last = -1;
            ws.hi = 0xffffffffu;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        while (true) {
            const uint hi = ws.hi;
            const bool stop = ws.done != 0 || hi == 0;
            const bool cached = ws.whi == hi && ws.wc > 0 && ws.tie == 0;
            threadgroup_barrier(mem_flags::mem_threadgroup);
            if (stop) {
                break;
            }
            uint lo = 0;
            uint c = 0;
            if (cached) {
                lo = ws.wlo;
                c = ws.wc;
            } else {
                // the widest [lo, hi) holding at most SMP_CAP tokens
                c = smp_count(l, n, 0, hi, sh, tid, ntg, lane, sg, nsg);
                if (c > SMP_CAP && hi == 0xffffffffu) {
                    // first window: the tokens within 10 of the top logit
                    // nearly always fit, which saves the radix walk
                    const uint guess = smp_key(lmax - 10.0f);
                    const uint cg = smp_count(l, n, guess, hi, sh, tid, ntg, lane, sg, nsg);
                    if (cg <= SMP_CAP) {
                        lo = guess;
                        c = cg;
                    }
                }
                if (c > SMP_CAP) {
                    lo = smp_window_lo(l, n, hi, whist, sh.sel, tid, ntg);
                    c = lo == hi ? 0u : smp_count(l, n, lo, hi, sh, tid, ntg, lane, sg, nsg);
                }
            }
            if (lo == hi) {
                // a run of more than SMP_CAP equal logits at key hi−1: its
                // tokens are in id order, all of the same mass
                const uint k = hi - 1;
                const uint g = smp_count(l, n, k, hi, sh, tid, ntg, lane, sg, nsg);
                if (tid == 0) {
                    const ulong ev = smp_exp_fx(smp_unkey(k) - lmax);
                    SmpWalk w = smp_load(ws);
                    uint used = 0;
                    bool took = false;
                    bool done = false;
                    while (used < g && !done) {
                        done = smp_step(ph, w, ev, K, minPfx, topPz, keep, target, took);
                        used += took ? 1u : 0u;
                    }
                    w.done = done ? 1u : 0u;
                    w.hi = k;
                    w.tie = 1;
                    w.tieUse = used;
                    w.whi = 0;
                    smp_store(ws, w);
                }
                threadgroup_barrier(mem_flags::mem_threadgroup);
                const uint used = ws.tieUse;
                if (ph == 2 && used > 0) {
                    const int id = smp_select(l, n, k, used - 1, sh, &selRes, tid, ntg);
                    if (tid == 0) {
                        ws.last = id;
                    }
                }
                threadgroup_barrier(mem_flags::mem_threadgroup);
                continue;
            }
            if (!cached) {
                if (tid == 0) {
                    atomic_store_explicit(&wcount, 0u, memory_order_relaxed);
                }
                threadgroup_barrier(mem_flags::mem_threadgroup);
                for (uint j = tid; j < n; j += ntg) {
                    const float v = l[j];
                    const uint k = smp_key(v);
                    if (k >= lo && k < hi) {
                        const uint at = atomic_fetch_add_explicit(&wcount, 1u, memory_order_relaxed);
                        sh.win_l[at] = v;
                        sh.win_id[at] = int(j);
                    }
                }
                uint P = 1;
                while (P < c) {
                    P <<= 1;
                }
                threadgroup_barrier(mem_flags::mem_threadgroup);
                for (uint j = c + tid; j < P; j += ntg) {
                    sh.win_l[j] = -INFINITY;
                    sh.win_id[j] = 0x7fffffff;
                }
                threadgroup_barrier(mem_flags::mem_threadgroup);
                // bitonic sort into the order (before-first)
                for (uint kk = 2; kk <= P; kk <<= 1) {
                    for (uint jj = kk >> 1; jj > 0; jj >>= 1) {
                        for (uint i = tid; i < P; i += ntg) {
                            const uint ix = i ^ jj;
                            if (ix > i) {
                                const float la = sh.win_l[i];
                                const int ia = sh.win_id[i];
                                const float lb = sh.win_l[ix];
                                const int ib = sh.win_id[ix];
                                const bool fwd = (i & kk) == 0;
                                if (fwd ? smp_before(lb, ib, la, ia) : smp_before(la, ia, lb, ib)) {
                                    sh.win_l[i] = lb;
                                    sh.win_id[i] = ib;
                                    sh.win_l[ix] = la;
                                    sh.win_id[ix] = ia;
                                }
                            }
                        }
                        threadgroup_barrier(mem_flags::mem_threadgroup);
                    }
                }
            }
            // the walk, in parallel: each thread takes a contiguous run of
            // the sorted window; prefix sums of the runs' masses give every
            // entry its cumulative mass, and the first entry that decides
            // the phase (code 2e: before entry e, 2e+1: after it) wins an
            // atomic min
            const uint rank0 = ws.rank;
            const ulong cum0 = ws.cum;
            const int last0 = ws.last;
            const uint per = (c + ntg - 1) / ntg;
            const uint e0 = min(tid * per, c);
            const uint e1 = min(e0 + per, c);
            ulong part = 0;
            for (uint e = e0; e < e1; e++) {
                part += smp_exp_fx(sh.win_l[e] - lmax);
            }
            sh.red_l[tid] = part;
            if (tid == 0) {
                atomic_store_explicit(&wstop, 0xffffffffu, memory_order_relaxed);
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            if (lane == 0) {
                ulong run = 0;
                for (uint i = 0; i < 32; i++) {
                    const ulong v = sh.red_l[sg * 32 + i];
                    sh.red_l[sg * 32 + i] = run;
                    run += v;
                }
                sh.sgsum[sg] = run;
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            ulong cum = cum0 + sh.red_l[tid];
            ulong total = 0;
            for (uint i = 0; i < nsg; i++) {
                cum += i < sg ? sh.sgsum[i] : 0ul;
                total += sh.sgsum[i];
            }
            uint code = 0xffffffffu;
            ulong evStop = 0;
            for (uint e = e0; e < e1; e++) {
                const uint r = rank0 + e;
                const ulong ev = smp_exp_fx(sh.win_l[e] - lmax);
                bool before;
                bool after;
                if (ph == 0) { // A: the mass of the top K
                    before = r == K;
                    after = false;
                } else if (ph == 1) { // B: top-k, min-p, top-p
                    before = r == K || (r > 0 && ev < minPfx);
                    after = cum + ev >= topPz;
                } else { // C: the draw
                    before = r == keep;
                    after = cum + ev > target;
                }
                if (before || after) {
                    code = before ? 2 * e : 2 * e + 1;
                    evStop = ev;
                    break;
                }
                cum += ev;
            }
            if (code != 0xffffffffu) {
                atomic_fetch_min_explicit(&wstop, code, memory_order_relaxed);
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            const uint win = atomic_load_explicit(&wstop, memory_order_relaxed);
            if (tid == 0) {
                ws.hi = lo;
                ws.wlo = lo;
                ws.whi = hi;
                ws.wc = c;
                ws.tie = 0;
                if (win == 0xffffffffu) { // undecided: all of the window taken
                    ws.rank = rank0 + c;
                    ws.cum = cum0 + total;
                    ws.last = c > 0 ? sh.win_id[c - 1] : last0;
                    ws.done = 0;
                }
            }
            if (win != 0xffffffffu && code == win) { // the deciding thread
                const uint e = win / 2;
                const bool took = (win & 1u) != 0;
                ws.rank = rank0 + e + (took ? 1u : 0u);
                ws.cum = took ? cum + evStop : cum;
                ws.last = took ? sh.win_id[e] : (e > 0 ? sh.win_id[e - 1] : last0);
                ws.done = 1;
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }
        // phase results (the walk consumed the whole order when not done)
        if (ph == 0) {
            z = ws.cum;
        } else if (ph == 1) {
            keep = ws.rank;
            mass = ws.cum;
        } else if (tid == 0) {
            smp_finish(ws.last, out, counts, hasCounts, n, lpo, hasLp, x, lse);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
}
