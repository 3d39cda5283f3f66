// The sampler (plan.Sample) on the GPU, so decode never reads the logits
// back: logit_bias, penalties from the sequence's token counts,
// temperature, top-k, softmax, top-p, min-p and the seeded draw with
// u = plan.Uniform(seed, step); then the drawn token is counted and its
// logprobs written when asked. Two launches (sample_scale below): the
// passes over the whole vocabulary in many threadgroups, the walks in the
// last of them to finish. The settings are step data the host writes per
// generation (plan.SampleSettings, word offsets below).
//
// When nothing truncates (no top-k or top-k ≥ n, top-p ≥ 1, min-p off:
// what an OpenAI chat request carries) the draw walks the tokens in index
// order (smp_draw_index), which samples the same distribution with no sort.
// Otherwise every cut and the draw are decided by walking the vocabulary in
// the contract's order (descending scaled logit, ties to the lower id).
// Without top-k the walks use the CPU's histogram algorithm (smp_locate,
// below the window code). With top-k the walk never needs the whole
// order, only its head, so the order is produced window by window: a window is the tokens whose logit lies in a
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
// Scratch (bind 4): [0, n) the adjusted logits; without top-k (but on the
// index path), from n on, each token's histogram bin as a byte (n bytes).

enum : uint {
    SMP_CAP = 2048,   // tokens per sorted window (16 KiB)
    SMP_MAXT = 1024,  // threads per threadgroup at most
    SMP_NB = 256,     // bins of a mass histogram
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
    SMP_DRAW_WORDS = 3,
    SMP_SET_WORDS = SMP_SET_BIAS + 2 * SMP_MAX_BIAS,
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

// smp_exp_taylor[k] is 1/k! in Q62 (rounded): the series' coefficients, so
// its Horner steps multiply only (a 64-bit division is a long routine on a
// GPU, and every token's mass takes this series).
constant ulong smp_exp_taylor[10] = {
    0x4000000000000000ul, 0x4000000000000000ul, 0x2000000000000000ul, 0xaaaaaaaaaaaaaabul, 0x2aaaaaaaaaaaaabul,
    0x88888888888889ul,   0x16c16c16c16c17ul,   0x3403403403403ul,    0x680680680680ul,     0xb8ef1d2ab64ul,
};

// smp_exp_fx is round(exp(d)·2^43) for d ≤ 0 (0 below −32, where it
// rounds to 0 anyway). exp(d) = 2^−k·2^(j/16)·exp(g): −d·log2 e in Q52
// from the exact −d·2^52, k its ceiling, j the top 4 bits of the
// fraction f = k − (−d·log2 e), g the rest times ln 2 (< 0.044), exp(g) by
// a 10-term Taylor series in Q62 (the dropped terms are below 2^-66).
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
    ulong R = smp_exp_taylor[9];
    for (int k = 8; k >= 0; k--) {
        R = smp_exp_taylor[k] + smp_mulshift(R, G, 62); // Horner: 1/k! + g·R
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
    ulong srt[SMP_MAXT]; // smp_sort's exchanges (win_l the other buffer)
    ulong sgsum[32];
    uint res[2];     // smp_window_lo's choice
    uint landRank;   // smp_land's result: rank and mass before the bin
    ulong landCum;
    int walkTok;     // smp_walk's result: the token, its rank and mass through it
    uint walkRank;
    ulong walkCum;
};

// smp_max_f and smp_sum_u reduce over the threadgroup through red (one
// word per SIMD-group), so the small kernels need not hold SmpShared. The
// SIMD-groups' words are reduced by a second SIMD-group reduction (lane i
// takes word i; at most 32 words, a SIMD-group's lanes at width 32), not
// a loop over them: that loop was a chain of 32 dependent threadgroup
// loads on every reduction's path. Both are exact in any order.
static inline float smp_max_f(float v, threadgroup float* red, uint lane, uint sg, uint nsg) {
    v = simd_max(v);
    if (lane == 0) {
        red[sg] = v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const float r = simd_max(red[lane < nsg ? lane : 0]);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return r;
}

// smp_max2_f is smp_max_f of a and of b in one round of barriers (ra and
// rb one word per SIMD-group each).
static inline void smp_max2_f(thread float& a, thread float& b, threadgroup float* ra, threadgroup float* rb, uint lane,
                              uint sg, uint nsg) {
    a = simd_max(a);
    b = simd_max(b);
    if (lane == 0) {
        ra[sg] = a;
        rb[sg] = b;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const uint i = lane < nsg ? lane : 0;
    a = simd_max(ra[i]);
    b = simd_max(rb[i]);
    threadgroup_barrier(mem_flags::mem_threadgroup);
}

static inline uint smp_sum_u(uint v, threadgroup uint* red, uint lane, uint sg, uint nsg) {
    v = simd_sum(v);
    if (lane == 0) {
        red[sg] = v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const uint r = simd_sum(lane < nsg ? red[lane] : 0u);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return r;
}

// smp_sum_limbs is the sum over the SIMD-group of v (the sum at most
// 2^64): three 22-bit limbs, whose sums over 32 lanes fit 32 bits (there
// are no 64-bit SIMD-group functions).
static inline ulong smp_sum_limbs(ulong v) {
    const ulong s0 = simd_sum(uint(v & 0x3fffffu));
    const ulong s1 = simd_sum(uint((v >> 22) & 0x3fffffu));
    const ulong s2 = simd_sum(uint(v >> 44));
    return s0 + (s1 << 22) + (s2 << 44);
}

// smp_scan_simd is the inclusive prefix sum of v over the SIMD-group's
// lanes: v's 32-bit halves in five shuffle steps, carrying from the low
// half into the high one (integers: exact in any order).
static inline ulong smp_scan_simd(ulong v, uint lane) {
    uint lo = uint(v & 0xffffffffu);
    uint hi = uint(v >> 32);
    for (ushort off = 1; off < 32; off <<= 1) {
        const uint olo = simd_shuffle_up(lo, off);
        const uint ohi = simd_shuffle_up(hi, off);
        if (lane >= off) {
            const uint s = lo + olo;
            hi += ohi + (s < lo ? 1u : 0u);
            lo = s;
        }
    }
    return (ulong(hi) << 32) | ulong(lo);
}

// smp_lane_ul is lane src's v.
static inline ulong smp_lane_ul(ulong v, uint src) {
    const uint lo = simd_shuffle(uint(v & 0xffffffffu), ushort(src));
    const uint hi = simd_shuffle(uint(v >> 32), ushort(src));
    return (ulong(hi) << 32) | ulong(lo);
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
    const float xm = smp_max_f(m, sh.red_f, lane, sg, nsg);
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
    return smp_sum_u(c, sh.red_u, lane, sg, nsg);
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

// smp_sort_shared is smp_sort for P > ntg: every exchange through
// threadgroup memory.
static inline void smp_sort_shared(uint c, uint P, threadgroup SmpShared& sh, uint tid, uint ntg) {
    for (uint j = c + tid; j < P; j += ntg) {
        sh.win_l[j] = -INFINITY;
        sh.win_id[j] = 0x7fffffff;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
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

// smp_sort sorts the c gathered tokens of sh.win_* into the order (a
// bitonic sort, padded to a power of two P). When P ≤ ntg each thread
// holds one element as a 64-bit key, its logit's key over its id's
// complement (the order is then descending key: one compare, no branches),
// and exchanges through threadgroup memory in two alternating buffers: a
// SIMD-group's barrier for most (distance < 32), two of the threadgroup's
// for the others (P = 1024: 15 of 55). Shuffles instead cost ~45
// instructions an exchange in the CUDA translation, whose shuffles handle
// partial SIMD-groups (Nsight Compute: the sort was 88K of sample's 200K
// warp instructions); the padding, key 0, sorts last.
static inline void smp_sort(uint c, threadgroup SmpShared& sh, uint tid, uint ntg) {
    uint P = 1;
    while (P < c) {
        P <<= 1;
    }
    if (P > ntg) {
        smp_sort_shared(c, P, sh, tid, ntg);
        return;
    }
    ulong k = tid < c ? (ulong(smp_key(sh.win_l[tid])) << 32) | ulong(~uint(sh.win_id[tid])) : 0ul;
    threadgroup_barrier(mem_flags::mem_threadgroup); // win_l is the second buffer
    threadgroup ulong* const other = (threadgroup ulong*)sh.win_l;
    uint buf = 0;
    // A buffer is rewritten two exchanges later: within a SIMD-group its
    // barrier in between orders that after the reads; an exchange across
    // SIMD-groups ends with a second threadgroup barrier, since the next
    // ones may be a SIMD-group's
    for (uint kk = 2; kk <= P; kk <<= 1) {
        for (uint jj = kk >> 1; jj > 0; jj >>= 1) {
            threadgroup ulong* x = buf == 0 ? sh.srt : other;
            buf ^= 1u;
            ulong o = k;
            if (tid < P) {
                x[tid] = k;
            }
            if (jj >= 32) {
                threadgroup_barrier(mem_flags::mem_threadgroup);
            } else {
                simdgroup_barrier(mem_flags::mem_threadgroup);
            }
            if (tid < P) {
                o = x[tid ^ jj];
            }
            if (jj >= 32) {
                threadgroup_barrier(mem_flags::mem_threadgroup);
            }
            // the pair's earlier element (larger key) goes to its lower
            // position when the run descends (tid & kk == 0), else to its
            // upper one
            const bool early = ((tid & jj) == 0) == ((tid & kk) == 0);
            k = early ? max(k, o) : min(k, o);
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tid < c) {
        sh.win_l[tid] = smp_unkey(uint(k >> 32));
        sh.win_id[tid] = int(~uint(k & 0xffffffffu));
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
}

// smp_scan returns the sum of v over the threads before tid (in thread
// order) and, in total, over all of them: each SIMD-group scans v
// (smp_scan_simd), then the SIMD-groups' sums, published through
// threadgroup memory, are scanned the same way by every SIMD-group (lane
// i takes group i's sum). (Lane 0 walking its 32 lanes' words in
// threadgroup memory, as before, was a dependent chain of ~32 loads and
// one barrier more, and a draw scans four to six times; so was a loop
// over the SIMD-groups' sums.)
static inline ulong smp_scan(ulong v, thread ulong& total, threadgroup SmpShared& sh, uint tid, uint ntg, uint lane,
                             uint sg, uint nsg) {
    const ulong inc = smp_scan_simd(v, lane);
    // the SIMD-group's last lane holds its sum (the last may be partial)
    if (lane == 31 || tid == ntg - 1) {
        sh.sgsum[sg] = inc;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const ulong w = lane < nsg ? sh.sgsum[lane] : 0ul;
    const ulong incw = smp_scan_simd(w, lane);
    total = smp_lane_ul(incw, nsg - 1);
    const ulong before = smp_lane_ul(incw - w, sg);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return inc - v + before;
}

// smp_select returns the id of the r-th token (0-based, in id order) whose
// key is k: per-thread counts over contiguous id ranges, their prefix
// sums, then the owning thread scans its range.
static inline int smp_select(device const float* l, uint n, uint k, uint r, threadgroup SmpShared& sh,
                             threadgroup int* res, uint tid, uint ntg, uint lane, uint sg, uint nsg) {
    const uint per = (n + ntg - 1) / ntg;
    const uint a = min(tid * per, n);
    const uint b = min(a + per, n);
    uint c = 0;
    for (uint j = a; j < b; j++) {
        c += smp_key(l[j]) == k ? 1u : 0u;
    }
    ulong all = 0;
    const uint start = uint(smp_scan(c, all, sh, tid, ntg, lane, sg, nsg));
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

// The path without top-k (what OpenAI requests carry) is the CPU's
// (engine/cpu/sample_order.go): every token's mass goes into a histogram
// of SMP_NB bins by distance below the top logit, a bin being a contiguous
// stretch of the order; a walk (the top-p cut, the draw) finds the bin
// where it lands from the bins' sums (smp_land), and only that bin's tokens
// are sorted and walked (smp_walk). A landing bin of more than SMP_CAP
// tokens is histogrammed again by key over its own key range until it fits
// or is a run of equal logits (whose tokens are in id order, of equal mass:
// the landing token's rank is a division). Masses are the fixed-point ones
// above, summed exactly, so the bins change no result: the token is the
// one a walk of the fully sorted vocabulary picks.

// smp_hist_clear zeroes a histogram: per bin the count, the mass's low
// word, the mass's high word.
static inline void smp_hist_clear(threadgroup atomic_uint* h, uint tid, uint ntg) {
    for (uint i = tid; i < 3 * SMP_NB; i += ntg) {
        atomic_store_explicit(&h[i], 0u, memory_order_relaxed);
    }
}

// smp_hist_add counts a token of mass ev in bin b: the 64-bit mass as two
// 32-bit atomics, the low word's carry into the high one (exact).
static inline void smp_hist_add(threadgroup atomic_uint* h, uint b, ulong ev) {
    atomic_fetch_add_explicit(&h[b], 1u, memory_order_relaxed);
    const uint lo = uint(ev & 0xffffffffu);
    uint hi = uint(ev >> 32);
    if (lo != 0) {
        const uint old = atomic_fetch_add_explicit(&h[SMP_NB + b], lo, memory_order_relaxed);
        hi += old + lo < old ? 1u : 0u;
    }
    if (hi != 0) {
        atomic_fetch_add_explicit(&h[2 * SMP_NB + b], hi, memory_order_relaxed);
    }
}

static inline ulong smp_hist_mass(threadgroup atomic_uint* h, uint b) {
    return (ulong(atomic_load_explicit(&h[2 * SMP_NB + b], memory_order_relaxed)) << 32) |
           ulong(atomic_load_explicit(&h[SMP_NB + b], memory_order_relaxed));
}

// smp_bin_top is scaled logit v's bin in the vocabulary's histogram:
// floor((lmax − v)·s), the last bin for the rest. s is a power of two, so
// the product is exact and the one rounding (the subtraction) is monotone:
// bins never rise as v rises.
static inline uint smp_bin_top(float v, float lmax, float s) {
    const float f = (lmax - v) * s;
    return f < float(SMP_NB - 1) ? uint(f) : SMP_NB - 1;
}

// smp_bin_key is key k's bin over the key range [klo, khi] (integer, exact;
// khi in bin 0, klo in a bin ≥ SMP_NB/2 when klo < khi).
static inline uint smp_bin_key(uint k, uint klo, uint khi) {
    return uint(ulong(khi - k) * SMP_NB / (ulong(khi - klo) + 1));
}

// smp_reached: a walk's cumulative mass c has reached target (strict:
// exceeded it).
static inline bool smp_reached(ulong c, ulong target, bool strict) { return strict ? c > target : c >= target; }

// smp_land returns the first non-empty bin of h where the cumulative mass
// (from cum at rank) reaches target or rank limit−1 falls, and advances
// rank and cum past the bins before it: each thread a run of bins, prefix
// sums of their counts and masses, an atomic min for the first deciding
// bin. SMP_NB when none does (the masses are exact, so only for a limit
// beyond the tokens, which callers never pass).
static inline uint smp_land(threadgroup atomic_uint* h, ulong target, bool strict, uint limit, thread uint& rank,
                            thread ulong& cum, threadgroup SmpShared& sh, threadgroup atomic_uint* stop, uint tid,
                            uint ntg, uint lane, uint sg, uint nsg) {
    const uint per = (SMP_NB + ntg - 1) / ntg;
    const uint b0 = min(tid * per, uint(SMP_NB));
    const uint b1 = min(b0 + per, uint(SMP_NB));
    ulong m = 0;
    ulong c = 0;
    for (uint b = b0; b < b1; b++) {
        m += smp_hist_mass(h, b);
        c += atomic_load_explicit(&h[b], memory_order_relaxed);
    }
    if (tid == 0) {
        atomic_store_explicit(stop, uint(SMP_NB), memory_order_relaxed);
    }
    ulong all = 0;
    ulong cumT = cum + smp_scan(m, all, sh, tid, ntg, lane, sg, nsg);
    uint rankT = rank + uint(smp_scan(c, all, sh, tid, ntg, lane, sg, nsg));
    uint mine = SMP_NB;
    for (uint b = b0; b < b1; b++) {
        const uint cb = atomic_load_explicit(&h[b], memory_order_relaxed);
        if (cb == 0) {
            continue;
        }
        const ulong mb = smp_hist_mass(h, b);
        if (smp_reached(cumT + mb, target, strict) || rankT + cb > limit - 1) {
            mine = b;
            break;
        }
        cumT += mb;
        rankT += cb;
    }
    if (mine != SMP_NB) {
        atomic_fetch_min_explicit(stop, mine, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const uint land = atomic_load_explicit(stop, memory_order_relaxed);
    if (mine != SMP_NB && mine == land) {
        sh.landRank = rankT;
        sh.landCum = cumT;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (land != SMP_NB) {
        rank = sh.landRank;
        cum = sh.landCum;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return land;
}

// smp_walk walks the c sorted tokens of sh.win_* from rank and cum: the
// first whose cumulative mass reaches target or whose rank is limit−1 (the
// last when none, which exact masses never leave) goes to sh.walk*. Each
// thread takes a contiguous run, prefix sums give every entry its
// cumulative mass, an atomic min the first deciding one.
static inline void smp_walk(uint c, float lmax, ulong target, bool strict, uint limit, uint rank, ulong cum,
                            threadgroup SmpShared& sh, threadgroup atomic_uint* stop, uint tid, uint ntg, uint lane,
                            uint sg, uint nsg) {
    const uint per = (c + ntg - 1) / ntg;
    const uint e0 = min(tid * per, c);
    const uint e1 = min(e0 + per, c);
    ulong part = 0;
    ulong ev0 = 0; // the run's first mass, kept: most runs are one entry
    for (uint e = e0; e < e1; e++) {
        const ulong ev = smp_exp_fx(sh.win_l[e] - lmax);
        ev0 = e == e0 ? ev : ev0;
        part += ev;
    }
    if (tid == 0) {
        atomic_store_explicit(stop, 0xffffffffu, memory_order_relaxed);
    }
    ulong all = 0;
    ulong cumT = cum + smp_scan(part, all, sh, tid, ntg, lane, sg, nsg);
    uint mine = 0xffffffffu;
    for (uint e = e0; e < e1; e++) {
        cumT += e == e0 ? ev0 : smp_exp_fx(sh.win_l[e] - lmax);
        if (smp_reached(cumT, target, strict) || rank + e == limit - 1) {
            mine = e;
            break;
        }
    }
    if (mine != 0xffffffffu) {
        atomic_fetch_min_explicit(stop, mine, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const uint won = atomic_load_explicit(stop, memory_order_relaxed);
    if ((mine != 0xffffffffu && mine == won) || (won == 0xffffffffu && c > 0 && tid == 0)) {
        const uint e = won == 0xffffffffu ? c - 1 : won;
        sh.walkTok = sh.win_id[e];
        sh.walkRank = rank + e;
        sh.walkCum = won == 0xffffffffu ? cum + all : cumT;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
}

// smp_gather_word adds the tokens of word w of the bins (x: the word
// xor the landing bin in every byte, so a zero byte is a token of the bin)
// with key in [klo, khi] to the window, in any order.
static inline void smp_gather_word(uint x, uint w, device const float* l, uint n, uint klo, uint khi,
                                   threadgroup SmpShared& sh, threadgroup atomic_uint* wcount) {
    if (((x - 0x01010101u) & ~x & 0x80808080u) == 0) {
        return; // no zero byte
    }
    for (uint q = 0; q < 4; q++) {
        const uint j = 4 * w + q;
        if (((x >> (8 * q)) & 255u) != 0 || j >= n) {
            continue;
        }
        const float v = l[j];
        const uint k = smp_key(v);
        if (k >= klo && k <= khi) {
            const uint at = atomic_fetch_add_explicit(&wcount[0], 1u, memory_order_relaxed);
            sh.win_l[at] = v;
            sh.win_id[at] = int(j);
        }
    }
}

// smp_locate is the CPU's sampleOrder.locate: the first token of the order
// whose cumulative mass reaches target (strict: exceeds it), or the token
// at rank limit−1 when that comes first; it returns the token and sets
// rankOut and cumOut (through it). top is the vocabulary's histogram,
// bins[i] token i's bin in it (a byte); sub is scratch for a refinement's.
static inline int smp_locate(device const float* l, device const uchar* bins, uint n, float lmax, ulong target,
                             bool strict, uint limit, thread uint& rankOut, thread ulong& cumOut,
                             threadgroup atomic_uint* top, threadgroup atomic_uint* sub, threadgroup SmpShared& sh,
                             threadgroup atomic_uint* stop, threadgroup atomic_uint* wcount, threadgroup int* selRes,
                             uint tid, uint ntg, uint lane, uint sg, uint nsg) {
    uint rank = 0;
    ulong cum = 0;
    const uint b = smp_land(top, target, strict, limit, rank, cum, sh, stop, tid, ntg, lane, sg, nsg);
    if (b == SMP_NB) {
        rankOut = 0;
        cumOut = 0;
        return 0; // unreachable with exact masses and limit ≤ n
    }
    uint cnt = atomic_load_explicit(&top[b], memory_order_relaxed);
    uint klo = 0;
    uint khi = 0xffffffffu;
    if (cnt > SMP_CAP) {
        // the bin's key range, then refinements by key until it fits
        if (tid == 0) {
            atomic_store_explicit(&wcount[0], 0xffffffffu, memory_order_relaxed);
            atomic_store_explicit(&wcount[1], 0u, memory_order_relaxed);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        uint mn = 0xffffffffu;
        uint mx = 0;
        for (uint j = tid; j < n; j += ntg) {
            if (uint(bins[j]) == b) {
                const uint k = smp_key(l[j]);
                mn = min(mn, k);
                mx = max(mx, k);
            }
        }
        atomic_fetch_min_explicit(&wcount[0], mn, memory_order_relaxed);
        atomic_fetch_max_explicit(&wcount[1], mx, memory_order_relaxed);
        threadgroup_barrier(mem_flags::mem_threadgroup);
        klo = atomic_load_explicit(&wcount[0], memory_order_relaxed);
        khi = atomic_load_explicit(&wcount[1], memory_order_relaxed);
        threadgroup_barrier(mem_flags::mem_threadgroup);
        while (cnt > SMP_CAP && klo < khi) {
            smp_hist_clear(sub, tid, ntg);
            threadgroup_barrier(mem_flags::mem_threadgroup);
            for (uint j = tid; j < n; j += ntg) {
                const float v = l[j];
                const uint k = smp_key(v);
                if (uint(bins[j]) == b && k >= klo && k <= khi) {
                    smp_hist_add(sub, smp_bin_key(k, klo, khi), smp_exp_fx(v - lmax));
                }
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            const uint sb = smp_land(sub, target, strict, limit, rank, cum, sh, stop, tid, ntg, lane, sg, nsg);
            if (sb == SMP_NB) {
                rankOut = 0;
                cumOut = 0;
                return 0; // unreachable, as above
            }
            cnt = atomic_load_explicit(&sub[sb], memory_order_relaxed);
            // the keys of sub-bin sb: khi − k in [ceil(sb·R/NB), ceil((sb+1)·R/NB) − 1]
            const ulong R = ulong(khi - klo) + 1;
            const ulong d0 = (ulong(sb) * R + SMP_NB - 1) / SMP_NB;
            const ulong d1 = ((ulong(sb) + 1) * R + SMP_NB - 1) / SMP_NB - 1;
            const uint h = khi;
            khi = h - uint(d0);
            klo = h - uint(d1);
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }
        if (cnt > SMP_CAP) {
            // a run of equal logits (key klo): in id order, each of mass ev
            const ulong ev = smp_exp_fx(smp_unkey(klo) - lmax);
            ulong i = ulong(limit - 1 - rank);
            if (ev > 0) {
                const ulong gap = target > cum ? target - cum : 0ul;
                // strict: the first i with cum + (i+1)·ev > target; else ≥
                const ulong first = strict ? gap / ev : (gap == 0 ? 0ul : (gap + ev - 1) / ev - 1);
                i = min(i, first);
            }
            i = min(i, ulong(cnt - 1));
            const int id = smp_select(l, n, klo, uint(i), sh, selRes, tid, ntg, lane, sg, nsg);
            rankOut = rank + uint(i);
            cumOut = cum + (i + 1) * ev;
            return id;
        }
    }
    // gather the landing set, sort it and walk it. One threadgroup reads
    // every token's bin: a byte each, four to a word, four words a
    // thread in flight (a float a token, one at a time, the gather took
    // ~24 instructions a token and waited on memory ~n/ntg times in a row),
    // and a logit only for a token of the bin (the order of the gathered
    // tokens does not matter: they are sorted)
    if (tid == 0) {
        atomic_store_explicit(&wcount[0], 0u, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    device const uint* bw = (device const uint*)bins; // bins is word-aligned (scratch + n floats)
    const uint nw = (n + 3) / 4;
    const uint b4 = b * 0x01010101u;
    for (uint w0 = tid; w0 < nw; w0 += 4 * ntg) {
        const uint w1 = w0 + ntg;
        const uint w2 = w1 + ntg;
        const uint w3 = w2 + ntg;
        // a byte 0 where the bin is b
        const uint x0 = bw[w0] ^ b4;
        const uint x1 = w1 < nw ? bw[w1] ^ b4 : 0xffffffffu;
        const uint x2 = w2 < nw ? bw[w2] ^ b4 : 0xffffffffu;
        const uint x3 = w3 < nw ? bw[w3] ^ b4 : 0xffffffffu;
        smp_gather_word(x0, w0, l, n, klo, khi, sh, wcount);
        smp_gather_word(x1, w1, l, n, klo, khi, sh, wcount);
        smp_gather_word(x2, w2, l, n, klo, khi, sh, wcount);
        smp_gather_word(x3, w3, l, n, klo, khi, sh, wcount);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    smp_sort(cnt, sh, tid, ntg);
    smp_walk(cnt, lmax, target, strict, limit, rank, cum, sh, stop, tid, ntg, lane, sg, nsg);
    rankOut = sh.walkRank;
    cumOut = sh.walkCum;
    const int tok = sh.walkTok;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return tok;
}

// The sampler runs as two launches (shaders/launch_sample.go), so the
// passes over the whole vocabulary are spread over many threadgroups:
//   sample_scale (G groups of a segment each): logit_bias, penalties,
//     temperature, each group's largest and least finite scaled logit;
//   sample (G groups): without top-k each token's fixed-point mass and
//     bin, each group's mass histogram (on the index path only each
//     group's mass); then the last group to finish (a ticket, group_ticket in common.metal)
//     does logprobs when asked, sums the groups' partials (exact integers,
//     so the same histogram in any order) and draws (on the index path the
//     groups' masses, then one group's tokens).
// (A fourth, one-group launch before them did logprobs, bias and penalties:
// ~6 us a token on the H200 even when a request asks for none of them; the
// masses were a launch of their own, sample_mass, until the ticket: ~14 us
// a token in the profile, a node's fixed cost most of it.)
// Launch scratch (bind 10), words: SMP_HDR_WORDS of header (the ticket,
// a spare word), then SMP_PART_WORDS a group: a spare word twice, its
// min-p count, a spare word, then its histogram (per bin the count, the
// mass's low and high words; on the index path the group's mass, low and
// high word, in the first two); then, SMP_RANGE_GAP words on, two words a
// group: its largest and least finite scaled logit; then, from the next
// multiple of SMP_RANGE_GAP words, on the index path, each token's mass
// (64 bits), so the last group's walk loads the landing segment's masses
// instead of computing their exps again. The ranges come from the launch
// before; keeping them off the parts' and masses' cache lines means no
// group has read a line of another group's before the ticket, so a stale
// cached copy cannot exist (the fences order it anyway).
enum : uint {
    SMP_HDR_WORDS = 2,
    SMP_PART_WORDS = 772,
    SMP_RANGE_GAP = 32,
};

// smp_range_at is group g's logit range words (of G groups).
static inline device uint* smp_range_at(device uint* scr, uint G, uint g) {
    return scr + SMP_HDR_WORDS + ulong(G) * SMP_PART_WORDS + SMP_RANGE_GAP + 2 * g;
}

// smp_masses_at is the tokens' masses (of G groups).
static inline device ulong* smp_masses_at(device uint* scr, uint G) {
    const ulong w = SMP_HDR_WORDS + ulong(G) * SMP_PART_WORDS + SMP_RANGE_GAP + 2 * G;
    return (device ulong*)(scr + (w + SMP_RANGE_GAP - 1) / SMP_RANGE_GAP * SMP_RANGE_GAP);
}

// smp_penalties: whether the counts' penalties apply (pen), and the
// repetition penalty among them (penRep).
static inline void smp_penalties(device const uint* settings, bool hasCounts, thread bool& pen, thread bool& penRep) {
    const float rep = as_type<float>(settings[SMP_SET_REPEAT]);
    penRep = rep != 0.0f && rep != 1.0f;
    pen = hasCounts && (penRep || as_type<float>(settings[SMP_SET_PRESENCE]) != 0.0f ||
                        as_type<float>(settings[SMP_SET_FREQUENCY]) != 0.0f);
}

// smp_hist_path: the draw takes the histogram path (no top-k).
static inline bool smp_hist_path(device const uint* settings, uint n) {
    const uint topK = settings[SMP_SET_TOPK];
    return topK == 0 || topK >= n;
}

// smp_index_path: nothing truncates (no top-k, top-p 1 or more or NaN,
// min-p off: engine/cpu's untruncated), so the draw walks index order
// (smp_draw_index) instead of the histogram path.
static inline bool smp_index_path(device const uint* settings, uint n) {
    return smp_hist_path(settings, n) && !(as_type<float>(settings[SMP_SET_TOPP]) < 1.0f) &&
           !(as_type<float>(settings[SMP_SET_MINP]) > 0.0f);
}

// smp_scr_words is one draw's launch scratch in words (launchSample's
// sampleScratch): the masses' offset, then each token's mass.
static inline ulong smp_scr_words(uint G, uint n) {
    const ulong w = SMP_HDR_WORDS + ulong(G) * SMP_PART_WORDS + SMP_RANGE_GAP + 2 * G;
    return (w + SMP_RANGE_GAP - 1) / SMP_RANGE_GAP * SMP_RANGE_GAP + 2 * ulong(n);
}

// SmpDraw is one draw's buffers (plan.Sample with draws bound: the draw
// of threadgroup row y; without, the one draw the bindings name).
struct SmpDraw {
    device const float* x;
    device const uint* settings;
    device int* counts;
    device float* scratch;
    device uint* scr;
    uint slot;
    uint step;
};

// smp_draw resolves draw y: its slot (whose settings and counts it takes),
// its logits row, its own scratch and launch scratch (G groups), its step.
// False for a slot or a row out of range: the draw does nothing. An
// unbound counts buffer is left as it is (never read).
static inline bool smp_draw(constant Args& args, device const uint* draws, uint y, uint G, device const float* x,
                            device const uint* settings, device int* counts, device float* scratch,
                            device uint* scr, thread SmpDraw& d) {
    const uint n = args.sample.n;
    uint row = 0;
    d.slot = 0;
    d.step = args.sample.step;
    if (has_bind(args, SAMPLE_DRAWS)) {
        device const uint* dw = draws + ulong(y) * SMP_DRAW_WORDS;
        d.slot = dw[0];
        row = dw[1];
        d.step = dw[2];
        if (d.slot >= args.sample.slots || row >= args.sample.x_rows) {
            return false;
        }
    }
    d.x = x + ulong(row) * args.sample.ldx;
    d.settings = settings + ulong(d.slot) * SMP_SET_WORDS;
    d.counts = has_bind(args, SAMPLE_COUNTS) ? counts + ulong(d.slot) * (2 * ulong(n) + 1) : counts;
    d.scratch = scratch + ulong(y) * 2 * ulong(n);
    d.scr = scr + ulong(y) * smp_scr_words(G, n);
    return true;
}

// smp_range reduces the G groups' ranges to the largest scaled logit
// and the least finite one (exact: a max in any order).
static inline void smp_range(device uint* scr, uint G, thread float& lmax, thread float& lmin,
                             threadgroup float* ra, threadgroup float* rb, uint tid, uint ntg, uint lane, uint sg,
                             uint nsg) {
    float lm = -INFINITY;
    float ln = INFINITY;
    for (uint g = tid; g < G; g += ntg) {
        device const uint* p = smp_range_at(scr, G, g);
        lm = max(lm, as_type<float>(p[0]));
        ln = min(ln, as_type<float>(p[1]));
    }
    ln = -ln;
    smp_max2_f(lm, ln, ra, rb, lane, sg, nsg);
    lmax = lm;
    lmin = -ln;
}

// smp_segment is group g's token range [a, b) of G segments.
static inline void smp_segment(uint n, uint g, uint G, thread uint& a, thread uint& b) {
    const uint seg = (n + G - 1) / G;
    a = min(g * seg, n);
    b = min(a + seg, n);
}

// 1-3. the adjusted logits: logit_bias, penalties, temperature (temp <= 0
// or NaN: no division, argmax in sample), each group over its segment, with
// its largest and least finite scaled logit. The penalties read each
// token's count where it stands: the counted tokens are the ids of count
// > 0, each listed once (plan.CountSampled), so this is the CPU's walk of
// the list. logit_bias ids are distinct (plan.SampleSettings).
kernel void sample_scale(device const float* xb [[buffer(0)]],
                         device const uint* settingsb [[buffer(2)]],
                         device const int* countsb [[buffer(3)]],
                         device float* scratchb [[buffer(4)]],
                         device const uint* draws [[buffer(6)]],
                         constant Args& args [[buffer(8)]],
                         device uint* scrb [[buffer(10)]],
                         uint2 tg [[threadgroup_position_in_grid]],
                         uint2 ntgs [[threadgroups_per_grid]],
                         uint tid [[thread_position_in_threadgroup]],
                         uint ntg [[threads_per_threadgroup]],
                         uint lane [[thread_index_in_simdgroup]],
                         uint sg [[simdgroup_index_in_threadgroup]],
                         uint nsg [[simdgroups_per_threadgroup]]) {
    threadgroup float red[64]; // smp_max2_f's two words per SIMD-group
    threadgroup atomic_uint nb; // the segment's logit_bias entries
    threadgroup uint bid[SMP_MAX_BIAS];
    threadgroup float bval[SMP_MAX_BIAS];
    SmpDraw dr;
    if (!smp_draw(args, draws, tg.y, ntgs.x, xb, settingsb, (device int*)countsb, scratchb, scrb, dr)) {
        return;
    }
    device const float* x = dr.x;
    device const uint* settings = dr.settings;
    device const int* counts = dr.counts;
    device float* scratch = dr.scratch;
    device uint* scr = dr.scr;
    if (tg.x == 0 && tid == 0) {
        scr[0] = 0; // sample's ticket
    }
    const float temp = as_type<float>(settings[SMP_SET_TEMP]);
    const float rep = as_type<float>(settings[SMP_SET_REPEAT]);
    const float pres = as_type<float>(settings[SMP_SET_PRESENCE]);
    const float freq = as_type<float>(settings[SMP_SET_FREQUENCY]);
    const uint nBias = min(settings[SMP_SET_NBIAS], uint(SMP_MAX_BIAS));
    bool pen = false;
    bool penRep = false;
    smp_penalties(settings, has_bind(args, SAMPLE_COUNTS), pen, penRep);
    device float* l = scratch;
    uint a = 0;
    uint b = 0;
    smp_segment(args.sample.n, tg.x, ntgs.x, a, b);
    uint nbs = 0;
    if (nBias > 0) {
        if (tid == 0) {
            atomic_store_explicit(&nb, 0u, memory_order_relaxed);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint i = tid; i < nBias; i += ntg) {
            const uint id = settings[SMP_SET_BIAS + 2 * i];
            if (id >= a && id < b) {
                const uint k = atomic_fetch_add_explicit(&nb, 1u, memory_order_relaxed);
                bid[k] = id;
                bval[k] = as_type<float>(settings[SMP_SET_BIAS + 2 * i + 1]);
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        nbs = atomic_load_explicit(&nb, memory_order_relaxed);
    }
    float lm = -INFINITY;
    float ln = INFINITY; // the least finite
    for (uint i = a + tid; i < b; i += ntg) {
        const float x0 = x[i];
        float v = smp_isnan(x0) ? -INFINITY : x0;
        for (uint k = 0; k < nbs; k++) {
            if (bid[k] == i) {
                v += bval[k];
            }
        }
        if (pen) {
            const int c = counts[i];
            if (c > 0) {
                if (penRep) {
                    v = v > 0.0f ? smp_div(v, rep) : v * rep;
                }
                v -= pres + float(c) * freq;
            }
        }
        if (temp > 0.0f) {
            v = smp_div(v, temp);
            if (as_type<uint>(v) == 0x80000000u) {
                v = 0.0f; // −0 ties with +0 in the order; one key for both
            }
        }
        l[i] = v;
        lm = max(lm, v);
        ln = smp_isinf(v) ? ln : min(ln, v);
    }
    if (!(temp > 0.0f)) {
        return;
    }
    ln = -ln;
    smp_max2_f(lm, ln, red, red + 32, lane, sg, nsg);
    ln = -ln;
    if (tid == 0) {
        device uint* p = smp_range_at(scr, ntgs.x, tg.x);
        p[0] = as_type<uint>(lm);
        p[1] = as_type<uint>(ln);
    }
}


// smp_bin_scale is the histogram's bins per unit of logit: the bins span
// [lmax − W, lmax], W the least power of two ≥ the finite logits' range,
// at most 32 (below it a token's fixed-point mass is 0).
static inline float smp_bin_scale(float lmax, float lmin) {
    const float r = lmax - lmin;
    float W = 32.0f;
    while (W * 0.5f >= r && W > 1e-30f) {
        W *= 0.5f;
    }
    return float(SMP_NB) / W;
}

// smp_minp_fx: min-p in fixed point: ev < minP ⇔ ev_fx < ceil(minP·2^43);
// 0 = off (past 1 every token but the first is cut, ties at the top too).
static inline ulong smp_minp_fx(float minP) { return minP > 0.0f ? ulong(ceil(min(minP, 2.0f) * SMP_FX)) : 0ul; }

// The draw when nothing truncates (smp_index_path: an OpenAI chat
// request's settings). Inverse-CDF sampling over any fixed order of the
// tokens samples the same distribution, so it takes index order: the first
// token whose cumulative mass exceeds smp_mul24(z, u24), z the whole mass
// (engine/cpu's drawIndex, the same integers in the same order). Nothing
// is sorted or binned: each group of sample leaves its tokens' masses and
// their sum, the last finds the group where the draw lands and walks its
// segment.

// smp_sum_ul is the sum of v over the threadgroup (at most 2^64 in all,
// at most SMP_MAXT threads): each SIMD-group's sum by limbs
// (smp_sum_limbs), published, then their sum the same way.
static inline ulong smp_sum_ul(ulong v, threadgroup ulong* red, uint lane, uint sg, uint nsg) {
    v = smp_sum_limbs(v);
    if (lane == 0) {
        red[sg] = v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const ulong r = smp_sum_limbs(lane < nsg ? red[lane] : 0ul);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return r;
}

// smp_group_mass is group g's mass as smp_mass_group left it on the index
// path (the first two words of its histogram's place).
static inline ulong smp_group_mass(device const uint* scr, uint g) {
    device const uint* p = scr + SMP_HDR_WORDS + ulong(g) * SMP_PART_WORDS;
    return ulong(p[4]) | (ulong(p[5]) << 32);
}

// smp_draw_index returns the first token in index order whose cumulative
// mass exceeds smp_mul24(z, u24): the groups' masses in prefix sums (each
// thread a run of groups) and an atomic min give the landing group; then
// its segment's tokens the same way, each thread a contiguous run of them
// (their masses ms as smp_mass_group left them: one a thread at the cuda
// geometry).
static inline int smp_draw_index(device const ulong* ms, uint n, uint u24, device const uint* scr, uint G, threadgroup SmpShared& sh, threadgroup atomic_uint* stop, uint tid, uint ntg,
                                 uint lane, uint sg, uint nsg) {
    const uint undecided = 0xffffffffu;
    uint per = (G + ntg - 1) / ntg;
    const uint g0 = min(tid * per, G);
    const uint g1 = min(g0 + per, G);
    ulong part = 0;
    for (uint g = g0; g < g1; g++) {
        part += smp_group_mass(scr, g);
    }
    if (tid == 0) {
        atomic_store_explicit(stop, undecided, memory_order_relaxed);
    }
    ulong z = 0;
    ulong cum = smp_scan(part, z, sh, tid, ntg, lane, sg, nsg); // its barriers publish the store
    // z ≥ the top token's mass > 0 and u24 < 2^24: target < z
    const ulong target = smp_mul24(z, u24);
    uint mine = undecided;
    for (uint g = g0; g < g1; g++) {
        const ulong m = smp_group_mass(scr, g);
        if (cum + m > target) {
            mine = g;
            break;
        }
        cum += m;
    }
    if (mine != undecided) {
        atomic_fetch_min_explicit(stop, mine, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const uint land = atomic_load_explicit(stop, memory_order_relaxed);
    if (mine != undecided && mine == land) {
        sh.landCum = cum;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (land == undecided) {
        return int(n - 1); // unreachable, as above (the CPU's choice too)
    }
    const ulong cum0 = sh.landCum;
    uint a = 0;
    uint b = 0;
    smp_segment(n, land, G, a, b);
    per = (b - a + ntg - 1) / ntg;
    const uint e0 = min(a + tid * per, b);
    const uint e1 = min(e0 + per, b);
    part = 0;
    for (uint i = e0; i < e1; i++) {
        part += ms[i];
    }
    if (tid == 0) { // every thread read land before the barrier above
        atomic_store_explicit(stop, undecided, memory_order_relaxed);
    }
    ulong all = 0;
    cum = cum0 + smp_scan(part, all, sh, tid, ntg, lane, sg, nsg);
    mine = undecided;
    for (uint i = e0; i < e1; i++) {
        cum += ms[i];
        if (cum > target) {
            mine = i;
            break;
        }
    }
    if (mine != undecided) {
        atomic_fetch_min_explicit(stop, mine, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const uint tok = atomic_load_explicit(stop, memory_order_relaxed);
    return tok == undecided ? int(n - 1) : int(tok);
}

// 4. without top-k: group g's tokens' masses, bins and histogram (on
// the index path only the group's mass), given the range [lmin, lmax]
static inline void smp_mass_group(device const uint* settings, device float* scratch, uint n, device uint* scr,
                                  uint g, uint G, float lmax, float lmin, threadgroup atomic_uint* h,
                                  threadgroup SmpShared& sh, uint tid, uint ntg, uint lane, uint sg, uint nsg) {
    uint a = 0;
    uint b = 0;
    smp_segment(n, g, G, a, b);
    device uint* p = scr + SMP_HDR_WORDS + ulong(g) * SMP_PART_WORDS;
    if (smp_index_path(settings, n)) {
        device ulong* ms = smp_masses_at(scr, G);
        ulong m = 0;
        for (uint i = a + tid; i < b; i += ntg) {
            const ulong ev = smp_exp_fx(scratch[i] - lmax);
            ms[i] = ev;
            m += ev;
        }
        m = smp_sum_ul(m, sh.sgsum, lane, sg, nsg);
        if (tid == 0) {
            p[4] = uint(m & 0xffffffffu);
            p[5] = uint(m >> 32);
        }
        return;
    }
    const float s = smp_bin_scale(lmax, lmin);
    const ulong minPfx = smp_minp_fx(as_type<float>(settings[SMP_SET_MINP]));
    device const float* l = scratch;
    device uchar* bins = (device uchar*)(scratch + n); // token i's bin
    smp_hist_clear(h, tid, ntg);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    uint km = 0;
    for (uint i = a + tid; i < b; i += ntg) {
        const float v = l[i];
        const ulong ev = smp_exp_fx(v - lmax);
        const uint bin = smp_bin_top(v, lmax, s);
        bins[i] = uchar(bin);
        smp_hist_add(h, bin, ev);
        km += ev >= minPfx ? 1u : 0u;
    }
    km = smp_sum_u(km, sh.red_u, lane, sg, nsg); // its barrier orders the histogram's atomics too
    if (tid == 0) {
        p[2] = km;
    }
    for (uint i = tid; i < 3 * SMP_NB; i += ntg) {
        p[4 + i] = atomic_load_explicit(&h[i], memory_order_relaxed);
    }
}

kernel void sample(device const float* xb [[buffer(0)]],
                   device int* outb [[buffer(1)]],
                   device const uint* settingsb [[buffer(2)]],
                   device int* countsb [[buffer(3)]],
                   device float* scratchb [[buffer(4)]],
                   device float* lpob [[buffer(5)]],
                   device const uint* draws [[buffer(6)]],
                   constant Args& args [[buffer(8)]],
                   device uint* scrb [[buffer(10)]],
                   uint2 tg [[threadgroup_position_in_grid]],
                   uint2 ntgs [[threadgroups_per_grid]],
                   uint tid [[thread_position_in_threadgroup]],
                   uint ntg [[threads_per_threadgroup]],
                   uint lane [[thread_index_in_simdgroup]],
                   uint sg [[simdgroup_index_in_threadgroup]],
                   uint nsg [[simdgroups_per_threadgroup]]) {
    threadgroup SmpShared sh;
    threadgroup SmpWalk ws;
    threadgroup atomic_uint wcount;
    threadgroup atomic_uint wstop;
    // two mass histograms (smp_hist_*): the vocabulary's and a
    // refinement's; the second's first 256 words are also smp_window_lo's;
    // the first is also this group's histogram in the mass pass
    threadgroup atomic_uint hbuf[6 * SMP_NB];
    threadgroup int selRes;
    threadgroup atomic_uint lw[2]; // smp_locate's gather count, or a key range
    threadgroup uint verdict;      // group_ticket's

    SmpDraw dr;
    if (!smp_draw(args, draws, tg.y, ntgs.x, xb, settingsb, countsb, scratchb, scrb, dr)) {
        return;
    }
    device const float* x = dr.x;
    device int* out = outb + dr.slot;
    device const uint* settings = dr.settings;
    device int* counts = dr.counts;
    device float* scratch = dr.scratch;
    device float* lpo = has_bind(args, SAMPLE_LOGPROBS) ? lpob + ulong(dr.slot) * SMP_LP_WORDS : lpob;
    device uint* scr = dr.scr;
    const uint n = args.sample.n;
    const ulong step = dr.step;
    const uint topK = settings[SMP_SET_TOPK];
    const float topP = as_type<float>(settings[SMP_SET_TOPP]);
    const float minP = as_type<float>(settings[SMP_SET_MINP]);
    const float temp = as_type<float>(settings[SMP_SET_TEMP]);
    const ulong seed = ulong(settings[SMP_SET_SEED_LO]) | (ulong(settings[SMP_SET_SEED_HI]) << 32);
    const uint lpReq = settings[SMP_SET_LOGPROBS];
    const bool hasCounts = has_bind(args, SAMPLE_COUNTS);
    const bool hasLp = lpReq > 0 && has_bind(args, SAMPLE_LOGPROBS);
    device float* l = scratch;
    const uint G = ntgs.x;
    float lmax = 0.0f;
    float lmin = 0.0f;
    if (temp > 0.0f) {
        smp_range(scr, G, lmax, lmin, sh.red_f, (threadgroup float*)sh.red_u, tid, ntg, lane, sg, nsg);
        if (smp_hist_path(settings, n) && !smp_isinf(lmax)) {
            smp_mass_group(settings, scratch, n, scr, tg.x, G, lmax, lmin, hbuf, sh, tid, ntg, lane, sg, nsg);
        }
    }
    if (!group_ticket(scr, G, &verdict, tid)) {
        return;
    }
    // the last group: logprobs of the raw logits (their record but the
    // drawn token's word)
    const float lse = hasLp ? smp_logprobs(x, n, min(lpReq - 1, uint(SMP_MAX_TOP)), lpo, sh, tid, ntg, lane, sg, nsg)
                            : 0.0f;

    // argmax (temp <= 0 or NaN) over the copied logits
    if (!(temp > 0.0f)) {
        const int best = smp_argmax(l, n, sh, tid, ntg, lane, sg, nsg);
        if (tid == 0) {
            smp_finish(best, out, counts, hasCounts, n, lpo, hasLp, x, lse);
        }
        return;
    }
    if (smp_isinf(lmax)) {
        // all −inf, or some +inf: the first maximum
        const int best = smp_argmax(l, n, sh, tid, ntg, lane, sg, nsg);
        if (tid == 0) {
            smp_finish(best, out, counts, hasCounts, n, lpo, hasLp, x, lse);
        }
        return;
    }

    const uint u24 = smp_uniform24(seed, step);
    const ulong minPfx = smp_minp_fx(minP);
    if (smp_index_path(settings, n)) {
        // 5. nothing truncates: index order over the groups' masses
        const int tok = smp_draw_index(smp_masses_at(scr, G), n, u24, scr, G, sh, &wstop, tid, ntg, lane, sg, nsg);
        if (tid == 0) {
            smp_finish(tok, out, counts, hasCounts, n, lpo, hasLp, x, lse);
        }
        return;
    }
    if (smp_hist_path(settings, n)) {
        // 5. without top-k: the histogram path (smp_locate) over the sum
        // of the groups' histograms
        device const uchar* bins = (device const uchar*)(scratch + n);
        threadgroup atomic_uint* top = hbuf;
        threadgroup atomic_uint* sub = hbuf + 3 * SMP_NB;
        // the groups' histograms summed by four threads a bin (each every
        // fourth group, four groups' words in flight at a time), their
        // partials through the window's threadgroup memory (free until the
        // gather), then one thread a bin
        threadgroup uint* qlo = (threadgroup uint*)sh.win_l;
        threadgroup uint* qhi = qlo + 4 * SMP_NB;
        threadgroup uint* qc = (threadgroup uint*)sh.win_id;
        for (uint t = tid; t < 4 * SMP_NB; t += ntg) {
            const uint b = t % SMP_NB;
            const uint q = t / SMP_NB;
            device const uint* p0 = scr + SMP_HDR_WORDS + 4 + b;
            uint c = 0;
            ulong m = 0;
            uint g = q;
            for (; g + 12 < G; g += 16) {
                uint pc[4];
                uint pl[4];
                uint ph[4];
                for (uint u = 0; u < 4; u++) {
                    device const uint* p = p0 + ulong(g + 4 * u) * SMP_PART_WORDS;
                    pc[u] = p[0];
                    pl[u] = p[SMP_NB];
                    ph[u] = p[2 * SMP_NB];
                }
                for (uint u = 0; u < 4; u++) {
                    c += pc[u];
                    m += ulong(pl[u]) | (ulong(ph[u]) << 32);
                }
            }
            for (; g < G; g += 4) {
                device const uint* p = p0 + ulong(g) * SMP_PART_WORDS;
                c += p[0];
                m += ulong(p[SMP_NB]) | (ulong(p[2 * SMP_NB]) << 32);
            }
            qc[t] = c;
            qlo[t] = uint(m & 0xffffffffu);
            qhi[t] = uint(m >> 32);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        ulong zs = 0;
        for (uint b = tid; b < SMP_NB; b += ntg) {
            uint c = 0;
            ulong m = 0;
            for (uint q = 0; q < 4; q++) {
                const uint t = q * SMP_NB + b;
                c += qc[t];
                m += ulong(qlo[t]) | (ulong(qhi[t]) << 32);
            }
            atomic_store_explicit(&top[b], c, memory_order_relaxed);
            atomic_store_explicit(&top[SMP_NB + b], uint(m & 0xffffffffu), memory_order_relaxed);
            atomic_store_explicit(&top[2 * SMP_NB + b], uint(m >> 32), memory_order_relaxed);
            zs += m;
        }
        uint km = 0;
        for (uint g = tid; g < G; g += ntg) {
            km += scr[SMP_HDR_WORDS + ulong(g) * SMP_PART_WORDS + 2];
        }
        ulong z = 0;
        smp_scan(zs, z, sh, tid, ntg, lane, sg, nsg); // its barriers publish the histogram
        // min-p keeps the tokens of mass ≥ minP·top (at least the top)
        const uint keepM = minPfx > 0 ? max(smp_sum_u(km, sh.red_u, lane, sg, nsg), 1u) : n;
        uint keep = n;
        ulong mass = z;
        uint rk = 0;
        ulong cm = 0;
        if (topP < 1.0f || keepM < n) {
            const ulong topPz = topP < 1.0f ? smp_frac(z, topP) : ~0ul;
            smp_locate(l, bins, n, lmax, topPz, false, keepM, rk, cm, top, sub, sh, &wstop, lw, &selRes, tid, ntg,
                       lane, sg, nsg);
            keep = rk + 1;
            mass = cm;
        }
        const int tok = smp_locate(l, bins, n, lmax, smp_mul24(mass, u24), true, keep, rk, cm, top, sub, sh, &wstop,
                                   lw, &selRes, tid, ntg, lane, sg, nsg);
        if (tid == 0) {
            smp_finish(tok, out, counts, hasCounts, n, lpo, hasLp, x, lse);
        }
        return;
    }

    // 5. with top-k: the sorted windows (phase A sums the top K's mass z)
    const uint K = topK;
    ulong z = 0;
    uint keep = n;
    ulong mass = z;
    if (tid == 0) {
        ws.whi = 0;
        ws.wlo = 0;
        ws.wc = 0;
        ws.tie = 0;
        ws.tieUse = 0;
    }

    // phases: A, B, C
    for (uint ph = 0; ph < 3; ph++) {
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
                    lo = smp_window_lo(l, n, hi, hbuf + 3 * SMP_NB, sh.res, tid, ntg);
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
                    const int id = smp_select(l, n, k, used - 1, sh, &selRes, tid, ntg, lane, sg, nsg);
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
                threadgroup_barrier(mem_flags::mem_threadgroup);
                smp_sort(c, sh, tid, ntg);
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
            if (tid == 0) {
                atomic_store_explicit(&wstop, 0xffffffffu, memory_order_relaxed);
            }
            ulong total = 0;
            ulong cum = cum0 + smp_scan(part, total, sh, tid, ntg, lane, sg, nsg);
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
