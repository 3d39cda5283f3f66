// mat_vec_q8x: the four mat-vec forms (mat_vec, rms_norm_mat_vec,
// silu_mul_mat_vec, gelu_mul_mat_vec) of q8_0 and q4_0 weights with the
// activation row quantized to 8 bits once per threadgroup and integer dot
// products (issue #34; launch rule: launch_matrix.go, Tuning.MatVecQ8K).
//
// Why: mat_vec_impl converts every weight to float (one int-to-float
// conversion and a multiply an element: on an H200 the conversions alone
// cap a q8_0 product near 90% of HBM speed and a q4_0 one near 45%) and
// every SIMD-group reads the whole activation row as floats (4 bytes of x,
// 8 for the gated forms, per weight byte). Here a threadgroup first
// quantizes x' (x; x⊙g for RMSNorm, whose 1/rms scales the finished sums
// as in mat_vec_impl; silu(gate)⊙up; gelu(gate)⊙up) into threadgroup
// memory as ggml's q8_0 does (per 32 elements d = max|v|/127, q =
// round(v/d), d kept as f16), and its SIMD-groups then read 16-byte words
// of weights and activations and take four products a dot4_i8 (dp4a on
// CUDA). The result is the CPU backend's 8-bit-activation product (as
// ggml's CUDA and CPU backends compute it), not the float-activation one.
//
// Geometry: one activation row per threadgroup (grid y), nsg SIMD-groups,
// each R (function constant 20) weight rows at a time, the row sets spread
// over the grid's x (capped by the launch rule: mat_vec_q8x_body); a lane takes whole 32-element
// blocks, two at a time, so each lane has 2R (q4_0) or 4R (q8_0) 16-byte
// weight loads in flight. k is at most MQ_MAX_K and a multiple of 32, and x
// (and g or up) are 16-byte aligned (the launch rule checks both).

#define MQ_MAX_K 16384

// The pre-quantized path (Tuning.MatVecQ8PreK; llama.cpp's quantize_q8_1 +
// mmvq design): quantize_q8x_<form> writes x' once, as the quantization
// below does it element for element, into the dispatch's scratch, and
// mat_vec_q8p_<type> copies those blocks into threadgroup memory instead of
// quantizing x' in every threadgroup (the down product's quantization was
// most of its instructions: BENCHMARKS.md, round 16). Scratch: a 16-byte
// head, then k int8 codes, nb scales (f16-rounded, as floats), nb code sums,
// nb sums of x² (RMSNorm's partials; nb = k/32). The head carries what the
// form decides, so one product serves the four: eps (RMSNorm's; -1: x' is
// not normalized) and ge (MatVec's GELU-out flag).
struct q8p_head {
    float eps;
    uint ge;
    uint pad0, pad1;
};
#define Q8P_HEAD 16
#define MQ_P_ROWS 2

// dot4_i8 is c plus the dot product of the four signed bytes of a and b.
#ifndef MSL_DOT4_I8
static inline int dot4_i8(uint a, uint b, int c) {
    return c + (int(a << 24) >> 24) * (int(b << 24) >> 24) + (int(a << 16) >> 24) * (int(b << 16) >> 24) +
           (int(a << 8) >> 24) * (int(b << 8) >> 24) + (int(a) >> 24) * (int(b) >> 24);
}
#endif

// pdl_wait: from here on the kernel reads what the grids before it wrote
// (on CUDA with programmatic dependent launch, ptxpdl's griddepcontrol.wait
// moves here from the entry's first instruction); pdl_launch_dependents
// lets the next grid's blocks start (and run up to their pdl_wait). No-ops
// elsewhere.
#ifndef MSL_PDL
static inline void pdl_wait() {}
static inline void pdl_launch_dependents() {}
#endif

// mq_nib says whether B holds 4-bit quants (16 bytes a block) or 8-bit.
template <typename B> struct mq_nib { enum { v = 0 }; };
template <> struct mq_nib<rp_q4_0> { enum { v = 1 }; };
template <> struct mq_nib<block_q4_0> { enum { v = 1 }; };

// mq_load loads block b of a weight row: its scale, and its quants as one
// (q4_0) or two (q8_0) 16-byte words.
static inline __attribute__((always_inline)) float mq_load(device const rp_q8_0* row, int b, int k,
                                                           thread uint4& q0, thread uint4& q1) {
    device const uchar* r = (device const uchar*)row;
    device const uint4* q = (device const uint4*)(r + rp_scale_bytes(k) + 32 * b);
    q0 = q[0];
    q1 = q[1];
    return float(((device const half*)r)[b]);
}

static inline __attribute__((always_inline)) float mq_load(device const rp_q4_0* row, int b, int k,
                                                           thread uint4& q0, thread uint4& q1) {
    device const uchar* r = (device const uchar*)row;
    q0 = *(device const uint4*)(r + rp_scale_bytes(k) + 16 * b);
    q1 = uint4(0u);
    return float(((device const half*)r)[b]);
}

// The file's 34- and 18-byte blocks are 2-byte aligned: halfwords.
static inline __attribute__((always_inline)) uint mq_u32(device const ushort* p, int i) {
    return uint(p[2 * i]) | (uint(p[2 * i + 1]) << 16);
}

static inline __attribute__((always_inline)) float mq_load(device const block_q8_0* row, int b, int k,
                                                           thread uint4& q0, thread uint4& q1) {
    device const ushort* p = (device const ushort*)(row + b);
    q0 = uint4(mq_u32(p + 1, 0), mq_u32(p + 1, 1), mq_u32(p + 1, 2), mq_u32(p + 1, 3));
    q1 = uint4(mq_u32(p + 1, 4), mq_u32(p + 1, 5), mq_u32(p + 1, 6), mq_u32(p + 1, 7));
    return float(row[b].d);
}

static inline __attribute__((always_inline)) float mq_load(device const block_q4_0* row, int b, int k,
                                                           thread uint4& q0, thread uint4& q1) {
    device const ushort* p = (device const ushort*)(row + b);
    q0 = uint4(mq_u32(p + 1, 0), mq_u32(p + 1, 1), mq_u32(p + 1, 2), mq_u32(p + 1, 3));
    q1 = uint4(0u);
    return float(row[b].d);
}

// mq_dot is the integer dot product of one weight block (q0, q1) with the
// block's activation quants (x0: elements 0-15, x1: 16-31); sx is the
// activations' sum, for q4_0's offset of 8 (its nibbles enter as 0..15:
// byte j's low nibble is element j, its high nibble element j+16).
template <typename B>
static inline __attribute__((always_inline)) int mq_dot(uint4 q0, uint4 q1, uint4 x0, uint4 x1, int sx) {
    int s = 0;
    if (mq_nib<B>::v) {
        const uint m = 0x0f0f0f0fu;
        s = dot4_i8(q0.x & m, x0.x, s);
        s = dot4_i8(q0.y & m, x0.y, s);
        s = dot4_i8(q0.z & m, x0.z, s);
        s = dot4_i8(q0.w & m, x0.w, s);
        s = dot4_i8((q0.x >> 4) & m, x1.x, s);
        s = dot4_i8((q0.y >> 4) & m, x1.y, s);
        s = dot4_i8((q0.z >> 4) & m, x1.z, s);
        s = dot4_i8((q0.w >> 4) & m, x1.w, s);
        s -= 8 * sx;
    } else {
        s = dot4_i8(q0.x, x0.x, s);
        s = dot4_i8(q0.y, x0.y, s);
        s = dot4_i8(q0.z, x0.z, s);
        s = dot4_i8(q0.w, x0.w, s);
        s = dot4_i8(q1.x, x1.x, s);
        s = dot4_i8(q1.y, x1.y, s);
        s = dot4_i8(q1.z, x1.z, s);
        s = dot4_i8(q1.w, x1.w, s);
    }
    return s;
}

// mq_quantize writes x' of one activation row into qx (4 quants a word),
// dx (each block's f16-rounded scale) and sx (each block's sum of quants),
// and returns this thread's part of Σx² (RMSNorm; 0 otherwise). Every
// thread runs every step (the shuffles over the 8 lanes of a block need
// them): a float4 unit u (elements 4u..4u+3) is thread u mod nt's, whole
// blocks on 8 consecutive lanes (nt is a multiple of 32), four units a
// step loaded before any is used.
template <int MODE>
static inline __attribute__((always_inline)) float mq_quantize(device const float* xr, device const float* x2r, int k,
                                                               int tid, int nt, threadgroup uint* qx,
                                                               threadgroup float* dx, threadgroup int* sx) {
    const int nu = k / 4;
    float ss = 0.0f;
    for (int base = 0; base < nu; base += 4 * nt) {
        float4 v[4], y[4];
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int u = base + j * nt + tid;
            const bool ok = u < nu;
            v[j] = ok ? *(device const float4*)(xr + 4 * u) : float4(0.0f);
            if (MODE != MV_PLAIN) y[j] = ok ? *(device const float4*)(x2r + 4 * u) : float4(0.0f);
        }
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int u = base + j * nt + tid;
            float4 a = v[j];
            if (MODE == MV_RMS) {
                ss += a.x * a.x + a.y * a.y + a.z * a.z + a.w * a.w;
                a *= y[j];
            } else if (MODE == MV_SILU) {
                a = float4(mv_silu(a.x), mv_silu(a.y), mv_silu(a.z), mv_silu(a.w)) * y[j];
            } else if (MODE == MV_GELU) {
                a = float4(gelu_tanh(a.x), gelu_tanh(a.y), gelu_tanh(a.z), gelu_tanh(a.w)) * y[j];
            }
            float am = max(max(fabs(a.x), fabs(a.y)), max(fabs(a.z), fabs(a.w)));
            am = max(am, simd_shuffle_xor(am, 1u));
            am = max(am, simd_shuffle_xor(am, 2u));
            am = max(am, simd_shuffle_xor(am, 4u));
            const float d = am / 127.0f;
            const float id = d != 0.0f ? 1.0f / d : 0.0f;
            const int q0 = int(round(a.x * id)), q1 = int(round(a.y * id));
            const int q2 = int(round(a.z * id)), q3 = int(round(a.w * id));
            int s = q0 + q1 + q2 + q3;
            s += simd_shuffle_xor(s, 1u);
            s += simd_shuffle_xor(s, 2u);
            s += simd_shuffle_xor(s, 4u);
            if (u < nu) {
                qx[u] = (uint(q0) & 255u) | ((uint(q1) & 255u) << 8) | ((uint(q2) & 255u) << 16) | (uint(q3) << 24);
                if ((u & 7) == 0) {
                    dx[u / 8] = float(half(d));
                    sx[u / 8] = s;
                }
            }
        }
    }
    return ss;
}

// mq_rows loads block b and block c of R rows from row0 (rows past n
// repeat the last one; their sums are not stored).
template <typename B>
static inline __attribute__((always_inline)) void mq_rows(device const uchar* W, ulong rb, int row0, int n, int R,
                                                          int b, int c, int k, thread uint4* a0, thread uint4* a1,
                                                          thread uint4* c0, thread uint4* c1, thread float* da,
                                                          thread float* dc) {
    #pragma unroll
    for (int r = 0; r < MV_MAX_ROWS; ++r) {
        if (r < R) {
            device const B* w = (device const B*)(W + ulong(min(row0 + r, n - 1)) * rb);
            da[r] = mq_load(w, b, k, a0[r], a1[r]);
            dc[r] = mq_load(w, c, k, c0[r], c1[r]);
        }
    }
}

// mat_vec_q8x_body: the threadgroup's activation row quantized into qx/dx/sx
// (with a barrier), then each SIMD-group's R rows, repeated over the grid:
// the launch rule caps the threadgroups at what the GPU holds at once
// (Tuning.MatVecQ8Groups a core), so each quantizes the row once for many
// rows instead of once for its nsg·R. A SIMD-group's first rows' first
// blocks are loaded before the quantization, so their latency overlaps
// it, and each next rows' first blocks as soon as a row set is summed.
//
// PRE (mat_vec_q8p): x' comes quantized in scr (quantize_q8x) and is only
// copied; the head's eps and ge stand for the form's. RC, when not 0, is
// R fixed at compile time (the 4-row arrays then keep only R rows'
// registers).
template <typename B, int MODE, bool PRE = false, int RC = 0>
static inline __attribute__((always_inline)) void mat_vec_q8x_body(
        device const uchar* W, device const float* x, device float* out, device const float* bias,
        device const float* res, device const float* x2, mv_shape sh, uint3 tgpig, uint ntg, uint sgitg, uint nsg,
        uint lane, threadgroup uint4* qx, threadgroup float* dx, threadgroup int* sx, threadgroup float* tss,
        device const uchar* scr = nullptr) {
    const int n = sh.n, k = sh.k;
    const int R = RC > 0 ? RC : clamp(int(fc_mv_rows), 1, MV_MAX_ROWS);
    const int xrow = int(tgpig.y);
    device const float* xr = x + xrow * sh.ldx;
    device const float* x2r = MODE == MV_RMS ? x2 : x2 + xrow * sh.ld2;
    const int nb = k / 32;
    const int gstride = int(ntg) * int(nsg) * R;
    int row0 = (int(tgpig.x) * int(nsg) + int(sgitg)) * R;
    const ulong rb = row_bytes<B>(k);
    // a lane's blocks: b0, b0 + 32, then every 64 on (a lane without a
    // second block takes its first again and drops the sums: no divergent
    // tail)
    const int b0 = int(lane);
    const int c0i = b0 + 32 < nb ? b0 + 32 : b0;
    uint4 a0[MV_MAX_ROWS], a1[MV_MAX_ROWS], c0[MV_MAX_ROWS], c1[MV_MAX_ROWS];
    float da[MV_MAX_ROWS], dc[MV_MAX_ROWS];
    if (row0 < n && b0 < nb) mq_rows<B>(W, rb, row0, n, R, b0, c0i, k, a0, a1, c0, c1, da, dc);
    // (mat_vec_q8p: the first rows' weights are in flight while the
    // pre-pass runs; nothing a grid before writes is read above)
    if (PRE) pdl_wait();

    const int nt = 32 * int(nsg);
    const int tid = int(sgitg) * 32 + int(lane);
    float ss = 0.0f, eps = sh.eps;
    bool norm = MODE == MV_RMS;
    if (PRE) {
        device const q8p_head* h = (device const q8p_head*)scr;
        eps = h->eps;
        norm = eps >= 0.0f;
        sh.ge = h->ge != 0u;
        device const uint4* gq = (device const uint4*)(scr + Q8P_HEAD);
        device const float* gd = (device const float*)(scr + Q8P_HEAD + k);
        device const int* gs = (device const int*)(gd + nb);
        device const float* gss = (device const float*)(gs + nb);
        for (int i = tid; i < k / 16; i += nt) qx[i] = gq[i];
        for (int i = tid; i < nb; i += nt) {
            dx[i] = gd[i];
            sx[i] = gs[i];
            if (norm) ss += gss[i];
        }
    } else {
        ss = mq_quantize<MODE>(xr, x2r, k, tid, nt, (threadgroup uint*)qx, dx, sx);
    }
    float inv = 1.0f;
    if (norm) {
        const float s = simd_sum(ss);
        if (lane == 0) tss[sgitg] = s;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (norm) {
        float t = 0.0f;
        for (int i = 0; i < 32; ++i) {
            if (i >= int(nsg)) break;
            t += tss[i];
        }
        inv = 1.0f / sqrt(t / float(k) + eps);
    }

    // no barrier follows: SIMD-groups leave the loop on their own
    for (; row0 < n; row0 += gstride) {
        float4 acc = float4(0.0f);
        for (int b = b0; b < nb; b += 64) {
            const bool two = b + 32 < nb;
            const int c = two ? b + 32 : b;
            if (b != b0) mq_rows<B>(W, rb, row0, n, R, b, c, k, a0, a1, c0, c1, da, dc);
            const uint4 xb0 = qx[2 * b], xb1 = qx[2 * b + 1], xc0 = qx[2 * c], xc1 = qx[2 * c + 1];
            const float xdb = dx[b], xdc = two ? dx[c] : 0.0f;
            const int xsb = sx[b], xsc = sx[c];
            float t[4];
            #pragma unroll
            for (int r = 0; r < MV_MAX_ROWS; ++r) {
                t[r] = 0.0f;
                if (r < R) {
                    t[r] = da[r] * (xdb * float(mq_dot<B>(a0[r], a1[r], xb0, xb1, xsb))) +
                           dc[r] * (xdc * float(mq_dot<B>(c0[r], c1[r], xc0, xc1, xsc)));
                }
            }
            acc += float4(t[0], t[1], t[2], t[3]);
        }
        // the next rows' first blocks, in flight during the sums and stores
        const int next = row0 + gstride;
        if (next < n && b0 < nb) mq_rows<B>(W, rb, next, n, R, b0, c0i, k, a0, a1, c0, c1, da, dc);
        float4 s;
        if (R == 1) {
            s = float4(simd_sum(acc.x), 0.0f, 0.0f, 0.0f);
        } else if (RC == 2) {
            const float2 s2 = simd_sum(float2(acc.x, acc.y));
            s = float4(s2.x, s2.y, 0.0f, 0.0f);
        } else {
            s = simd_sum(acc);
        }
        s *= inv;
        if (lane == 0) {
            const int orow = xrow * sh.ldo, rrow = xrow * sh.ldr;
            const bool hb = sh.hb, hr = sh.hr, ge = sh.ge;
            mv_store(out, bias, res, hb, hr, ge, orow, rrow, row0, s.x);
            if (R > 1 && row0 + 1 < n) mv_store(out, bias, res, hb, hr, ge, orow, rrow, row0 + 1, s.y);
            if (R > 2 && row0 + 2 < n) mv_store(out, bias, res, hb, hr, ge, orow, rrow, row0 + 2, s.z);
            if (R > 3 && row0 + 3 < n) mv_store(out, bias, res, hb, hr, ge, orow, rrow, row0 + 3, s.w);
        }
    }
}

// Bindings and P: mat_vec_impl's.
template <typename B, int MODE>
kernel void mat_vec_q8x_impl(
        device const uchar* W [[buffer(0)]],
        device const float* x [[buffer(1)]],
        device float* out [[buffer(2)]],
        device const float* bias [[buffer(3)]],
        device const float* res [[buffer(4)]],
        device const float* x2 [[buffer(5)]],
        constant Args& args [[buffer(8)]],
        uint3 tgpig [[threadgroup_position_in_grid]],
        uint3 ntgs [[threadgroups_per_grid]],
        uint sgitg [[simdgroup_index_in_threadgroup]],
        uint nsg [[simdgroups_per_threadgroup]],
        uint lane [[thread_index_in_simdgroup]]) {
    threadgroup uint4 qx[MQ_MAX_K / 16];
    threadgroup float dx[MQ_MAX_K / 32];
    threadgroup int sx[MQ_MAX_K / 32];
    threadgroup float tss[32];
    mv_shape sh = mv_product_shape<MODE>(args);
    sh.k = min(sh.k, MQ_MAX_K);
    if (int(tgpig.y) >= sh.m) return;
    mat_vec_q8x_body<B, MODE, false>(W, x, out, bias, res, x2, sh, tgpig, ntgs.x, sgitg, nsg, lane, qx, dx, sx, tss);
}

typedef decltype(mat_vec_q8x_impl<rp_q8_0, MV_PLAIN>) mat_vec_q8x_t;

template [[host_name("mat_vec_q8_0_q8x")]] kernel mat_vec_q8x_t mat_vec_q8x_impl<block_q8_0, MV_PLAIN>;
template [[host_name("mat_vec_q4_0_q8x")]] kernel mat_vec_q8x_t mat_vec_q8x_impl<block_q4_0, MV_PLAIN>;
template [[host_name("mat_vec_q8_0_q8x_rp")]] kernel mat_vec_q8x_t mat_vec_q8x_impl<rp_q8_0, MV_PLAIN>;
template [[host_name("mat_vec_q4_0_q8x_rp")]] kernel mat_vec_q8x_t mat_vec_q8x_impl<rp_q4_0, MV_PLAIN>;
template [[host_name("rms_norm_mat_vec_q8_0_q8x")]] kernel mat_vec_q8x_t mat_vec_q8x_impl<block_q8_0, MV_RMS>;
template [[host_name("rms_norm_mat_vec_q4_0_q8x")]] kernel mat_vec_q8x_t mat_vec_q8x_impl<block_q4_0, MV_RMS>;
template [[host_name("rms_norm_mat_vec_q8_0_q8x_rp")]] kernel mat_vec_q8x_t mat_vec_q8x_impl<rp_q8_0, MV_RMS>;
template [[host_name("rms_norm_mat_vec_q4_0_q8x_rp")]] kernel mat_vec_q8x_t mat_vec_q8x_impl<rp_q4_0, MV_RMS>;
template [[host_name("silu_mul_mat_vec_q8_0_q8x")]] kernel mat_vec_q8x_t mat_vec_q8x_impl<block_q8_0, MV_SILU>;
template [[host_name("silu_mul_mat_vec_q4_0_q8x")]] kernel mat_vec_q8x_t mat_vec_q8x_impl<block_q4_0, MV_SILU>;
template [[host_name("silu_mul_mat_vec_q8_0_q8x_rp")]] kernel mat_vec_q8x_t mat_vec_q8x_impl<rp_q8_0, MV_SILU>;
template [[host_name("silu_mul_mat_vec_q4_0_q8x_rp")]] kernel mat_vec_q8x_t mat_vec_q8x_impl<rp_q4_0, MV_SILU>;
template [[host_name("gelu_mul_mat_vec_q8_0_q8x")]] kernel mat_vec_q8x_t mat_vec_q8x_impl<block_q8_0, MV_GELU>;
template [[host_name("gelu_mul_mat_vec_q4_0_q8x")]] kernel mat_vec_q8x_t mat_vec_q8x_impl<block_q4_0, MV_GELU>;
template [[host_name("gelu_mul_mat_vec_q8_0_q8x_rp")]] kernel mat_vec_q8x_t mat_vec_q8x_impl<rp_q8_0, MV_GELU>;
template [[host_name("gelu_mul_mat_vec_q4_0_q8x_rp")]] kernel mat_vec_q8x_t mat_vec_q8x_impl<rp_q4_0, MV_GELU>;

// quantize_q8x_<form>: x' of one activation row (m = 1: the launch rule)
// into the scratch head's layout (above), a SIMD-group a 32-block and a
// lane an element; grid ceil(nb/8) × 256 threads. Per element the same
// operations as mq_quantize (the block's max is exact in any order, the
// code sum an integer), so the codes and scales are the in-kernel path's
// bit for bit; Σx² is summed by blocks, so RMSNorm's 1/rms may differ from
// it in the last bits.
template <int MODE>
kernel void quantize_q8x_impl(
        device const float* x [[buffer(1)]],
        device const float* x2 [[buffer(5)]],
        constant Args& args [[buffer(8)]],
        device uchar* scratch [[buffer(10)]],
        uint3 tgpig [[threadgroup_position_in_grid]],
        uint sgitg [[simdgroup_index_in_threadgroup]],
        uint lane [[thread_index_in_simdgroup]]) {
    // the product on these blocks may start now, up to its pdl_wait (its
    // first weights' loads); this grid's wait for the one before it is
    // still the entry's first instruction, so that one has finished
    pdl_launch_dependents();
    const mv_shape sh = mv_product_shape<MODE>(args);
    const int k = min(sh.k, MQ_MAX_K), nb = k / 32;
    const int b = int(tgpig.x) * 8 + int(sgitg);
    if (tgpig.x == 0 && sgitg == 0 && lane == 0) {
        device q8p_head* h = (device q8p_head*)scratch;
        h->eps = MODE == MV_RMS ? sh.eps : -1.0f;
        h->ge = sh.ge ? 1u : 0u;
    }
    if (b >= nb) return; // the whole SIMD-group
    const int i = b * 32 + int(lane);
    float a = x[i], ss = 0.0f;
    if (MODE == MV_RMS) {
        ss = a * a;
        a *= x2[i];
    } else if (MODE == MV_SILU) {
        a = mv_silu(a) * x2[i];
    } else if (MODE == MV_GELU) {
        a = gelu_tanh(a) * x2[i];
    }
    const float d = simd_max(fabs(a)) / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const int q = int(round(a * id));
    int s = q;
    for (uint o = 1; o < 32; o <<= 1) s += simd_shuffle_xor(s, o);
    if (MODE == MV_RMS) ss = simd_sum(ss);
    ((device char*)(scratch + Q8P_HEAD))[i] = char(q);
    if (lane == 0) {
        device float* gd = (device float*)(scratch + Q8P_HEAD + k);
        gd[b] = float(half(d));
        ((device int*)(gd + nb))[b] = s;
        ((device float*)(gd + 2 * nb))[b] = ss;
    }
}

typedef decltype(quantize_q8x_impl<MV_PLAIN>) quantize_q8x_t;

template [[host_name("quantize_q8x")]] kernel quantize_q8x_t quantize_q8x_impl<MV_PLAIN>;
template [[host_name("rms_norm_quantize_q8x")]] kernel quantize_q8x_t quantize_q8x_impl<MV_RMS>;
template [[host_name("silu_mul_quantize_q8x")]] kernel quantize_q8x_t quantize_q8x_impl<MV_SILU>;
template [[host_name("gelu_mul_quantize_q8x")]] kernel quantize_q8x_t quantize_q8x_impl<MV_GELU>;

// mat_vec_q8p_<type>: the product of any form on quantize_q8x's x' (the
// Product family's sizes, the same in every form; bindings 0-4 and P:
// mat_vec_impl's; the scratch at 10), MQ_P_ROWS rows a SIMD-group, fixed
// (the launch rule takes it only at that many: shaders.q8pRows).
template <typename B>
kernel void mat_vec_q8p_impl(
        device const uchar* W [[buffer(0)]],
        device const float* x [[buffer(1)]],
        device float* out [[buffer(2)]],
        device const float* bias [[buffer(3)]],
        device const float* res [[buffer(4)]],
        constant Args& args [[buffer(8)]],
        device const uchar* scratch [[buffer(10)]],
        uint3 tgpig [[threadgroup_position_in_grid]],
        uint3 ntgs [[threadgroups_per_grid]],
        uint sgitg [[simdgroup_index_in_threadgroup]],
        uint nsg [[simdgroups_per_threadgroup]],
        uint lane [[thread_index_in_simdgroup]]) {
    threadgroup uint4 qx[MQ_MAX_K / 16];
    threadgroup float dx[MQ_MAX_K / 32];
    threadgroup int sx[MQ_MAX_K / 32];
    threadgroup float tss[32];
    mv_shape sh = mv_product_shape<MV_SILU>(args); // (no form's own word: eps and ge come from the head)
    sh.k = min(sh.k, MQ_MAX_K);
    if (int(tgpig.y) >= sh.m) return;
    mat_vec_q8x_body<B, MV_PLAIN, true, MQ_P_ROWS>(W, x, out, bias, res, x, sh, tgpig, ntgs.x, sgitg, nsg, lane, qx, dx,
                                                   sx, tss, scratch);
}

typedef decltype(mat_vec_q8p_impl<rp_q8_0>) mat_vec_q8p_t;

template [[host_name("mat_vec_q8_0_q8p")]] kernel mat_vec_q8p_t mat_vec_q8p_impl<block_q8_0>;
template [[host_name("mat_vec_q4_0_q8p")]] kernel mat_vec_q8p_t mat_vec_q8p_impl<block_q4_0>;
template [[host_name("mat_vec_q8_0_q8p_rp")]] kernel mat_vec_q8p_t mat_vec_q8p_impl<rp_q8_0>;
template [[host_name("mat_vec_q4_0_q8p_rp")]] kernel mat_vec_q8p_t mat_vec_q8p_impl<rp_q4_0>;
