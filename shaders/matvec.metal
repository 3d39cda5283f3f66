// mat_vec, rms_norm_mat_vec, layer_norm_mat_vec, silu_mul_mat_vec, gelu_mul_mat_vec: out[m, n] = x'·Wᵀ + bias + res
// for small m (decode, beams), one instantiation per weight type
// (launch rules: launch_matrix.go).
//
// Geometry: threadgroups of nsg SIMD-groups; SIMD-group s of threadgroup
// (gx, gy) computes weight rows [(gx*nsg + s)*R, +R) for the x rows
// [gy*MB, +MB). The 32 lanes stride over 16-element chunks of the row, two
// chunks per step (both chunks' weight and activation loads are issued
// before either is used, so each lane has two rows' worth of loads in
// flight), and simd_sum reduces each dot product. R and MB are function
// constants 20 and 21 (Tuning.MatVecRows, Tuning.MatVecBatch). The x rows
// are taken one after another: a SIMD-group re-reads its R weight rows per
// x row (from the cache after the first), which keeps every accumulator a
// named register.
//
// x' is x (mat_vec), rmsnorm(x)⊙g (rms_norm_mat_vec: a SIMD-group's lanes
// cover the whole x row, so each SIMD-group sums its squares from the loads
// the product makes anyway and scales the finished sums by 1/rms: no norm
// pass, no barrier), layernorm(x)⊙g + b (layer_norm_mat_vec: each
// SIMD-group takes its row's mean and variance in a prologue, below) or
// silu(gate)⊙up (silu_mul_mat_vec) or gelu_tanh(gate)⊙up (gelu_mul_mat_vec). Activations stay float: the GPU
// multiplies dequantised weights by float x, where the CPU quantises x to
// q8_0/q8_1/q8_K first (see launch_matrix.go).
//
// No array here is indexed by a value known only at run time: on CUDA
// (function constants are run-time values there) such arrays live in local
// memory, and round 1's mat-vecs spent most of their time in it (issue #34:
// 544-952-byte stack frames, L1 hit rate 96%). Loops over R and MB run to
// compile-time bounds, and the per-row accumulators are the components of
// one float4; the helpers are always_inline, since a call takes their
// arrays by address (clang did not inline the row helper on its own).

constant uint fc_mv_rows [[function_constant(20)]];
constant uint fc_mv_batch [[function_constant(21)]];
// 1: x (or gate) and the second input (g, or up) start 16-byte aligned, and
// so do their rows (Tuning.Align16 and the launch rule's checks): a
// chunk's activations are four 16-byte loads per input, not 16 single ones
constant uint fc_mv_xalign [[function_constant(22)]];

#define MV_MAX_ROWS 4
#define MV_MAX_BATCH 8


enum { MV_PLAIN = 0, MV_RMS = 1, MV_SILU = 2, MV_GELU = 3, MV_LN = 4 };

// fast::exp: the GPU's approximation (on CUDA ex2.approx, where exp is
// computed in double); the SiLU products stay within the tests' tolerances
static inline float mv_silu(float g) { return g / (1.0f + fast::exp(-g)); }

// mv_x16 fills xv with x' over elements [e0, e0+16) of one activation row,
// zero past k, and returns the sum of squares of x there (RMSNorm; 0 for the
// other forms). xr is the row of x (or gate), x2 the RMSNorm weight g or the
// row of up. For RMSNorm xv is g⊙x: the row's 1/rms scales the finished
// dot products instead. Both rows are loaded before any is used, with no
// branch between the loads of a whole chunk: a load under a per-element
// condition waited for its own latency before the next one went out (on
// CUDA, 16 round trips a chunk; issue #34). Past k both are zero, so the
// forms give zero there (silu(0)·0, gelu(0)·0, 0·0) as the selects did.
template <int MODE>
static inline __attribute__((always_inline)) float mv_x16(device const float* xr, device const float* x2, int e0, int k,
                                                          bool xa, thread float* xv) {
    const int cnt = min(16, k - e0);
    float yv[16];
    if (cnt == 16 && xa) { // 16-byte aligned rows (fc_mv_xalign)
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
            const float4 v = *(device const float4*)(xr + e0 + 4 * j);
            xv[4 * j] = v.x;
            xv[4 * j + 1] = v.y;
            xv[4 * j + 2] = v.z;
            xv[4 * j + 3] = v.w;
        }
        if (MODE != MV_PLAIN) {
            #pragma unroll
            for (int j = 0; j < 4; ++j) {
                const float4 v = *(device const float4*)(x2 + e0 + 4 * j);
                yv[4 * j] = v.x;
                yv[4 * j + 1] = v.y;
                yv[4 * j + 2] = v.z;
                yv[4 * j + 3] = v.w;
            }
        }
    } else if (cnt == 16) { // every chunk of a quantized row
        #pragma unroll
        for (int i = 0; i < 16; ++i) xv[i] = xr[e0 + i];
        if (MODE != MV_PLAIN) {
            #pragma unroll
            for (int i = 0; i < 16; ++i) yv[i] = x2[e0 + i];
        }
    } else {
        #pragma unroll
        for (int i = 0; i < 16; ++i) xv[i] = i < cnt ? xr[e0 + i] : 0.0f;
        if (MODE != MV_PLAIN) {
            #pragma unroll
            for (int i = 0; i < 16; ++i) yv[i] = i < cnt ? x2[e0 + i] : 0.0f;
        }
    }
    float ss = 0.0f;
    if (MODE == MV_RMS) {
        #pragma unroll
        for (int i = 0; i < 16; ++i) {
            ss += xv[i] * xv[i];
            xv[i] = xv[i] * yv[i];
        }
    } else if (MODE == MV_SILU) {
        #pragma unroll
        for (int i = 0; i < 16; ++i) xv[i] = mv_silu(xv[i]) * yv[i];
    } else if (MODE == MV_GELU) {
        #pragma unroll
        for (int i = 0; i < 16; ++i) xv[i] = gelu_tanh(xv[i]) * yv[i];
    }
    return ss;
}

// mv_ln_stats returns one activation row's LayerNorm mean and 1/sqrt(var +
// eps) to every lane of a SIMD-group, computed as layer_norm computes them:
// the mean, then the biased variance around it in a second pass. The
// lane's chunks are the ones the product takes (c, c + 32, ...); the first
// two (rows up to 1024 wide: all of Whisper's) stay in registers between
// the passes, so the prologue is one round trip for x and two reductions,
// where a LayerNorm launch was a graph node of its own (issue #34). Wider
// rows read their further chunks again in the second pass.
static inline __attribute__((always_inline)) float2 mv_ln_stats(device const float* xr, int k, int nc, int lane,
                                                                bool xal, float eps) {
    float v0[16], v1[16];
    mv_x16<MV_PLAIN>(xr, xr, 16 * lane, k, xal, v0); // zeros past k
    mv_x16<MV_PLAIN>(xr, xr, 16 * (lane + 32), k, xal, v1);
    float s = 0.0f;
    #pragma unroll
    for (int i = 0; i < 16; ++i) s += v0[i] + v1[i];
    for (int c = lane + 64; c < nc; c += 32) {
        float t[16];
        mv_x16<MV_PLAIN>(xr, xr, 16 * c, k, xal, t);
        #pragma unroll
        for (int i = 0; i < 16; ++i) s += t[i];
    }
    const float mean = simd_sum(s) / float(k);
    float q = 0.0f;
    #pragma unroll
    for (int i = 0; i < 16; ++i) { // elements past k are not the row's
        const float d0 = 16 * lane + i < k ? v0[i] - mean : 0.0f;
        const float d1 = 16 * (lane + 32) + i < k ? v1[i] - mean : 0.0f;
        q += d0 * d0 + d1 * d1;
    }
    for (int c = lane + 64; c < nc; c += 32) {
        float t[16];
        mv_x16<MV_PLAIN>(xr, xr, 16 * c, k, xal, t);
        #pragma unroll
        for (int i = 0; i < 16; ++i) {
            const float d = 16 * c + i < k ? t[i] - mean : 0.0f;
            q += d * d;
        }
    }
    return float2(mean, rsqrt(simd_sum(q) / float(k) + eps));
}

// mv_ln16 fills xv with layernorm(x)⊙g + b over elements [e0, e0+16) of
// one row (st: mv_ln_stats), in layer_norm's order of operations: x, g and
// b loaded again as the product takes each chunk (from the cache after the
// statistics' load); past k they load as zeros, so xv is zero there as the
// other forms' is.
static inline __attribute__((always_inline)) void mv_ln16(device const float* xr, device const float* g,
                                                          device const float* bn, int e0, int k, bool xa, float2 st,
                                                          thread float* xv) {
    float gv[16], bv[16];
    mv_x16<MV_PLAIN>(xr, xr, e0, k, xa, xv);
    mv_x16<MV_PLAIN>(g, g, e0, k, xa, gv);
    mv_x16<MV_PLAIN>(bn, bn, e0, k, xa, bv);
    #pragma unroll
    for (int i = 0; i < 16; ++i) xv[i] = (xv[i] - st.x) * st.y * gv[i] + bv[i];
}

// mv_dot16 is the dot product of a dequantised 16-element chunk with xv.
static inline __attribute__((always_inline)) float mv_dot16(thread const float* wv, thread const float* xv) {
    float s = 0.0f;
    #pragma unroll
    for (int i = 0; i < 16; ++i) s += wv[i] * xv[i];
    return s;
}

// mv_pair returns in ta and tb the dot products of chunks ea and eb of the
// weight rows wa and wb with xa and xb (x and y: wa's, z and w: wb's). Its
// four loads go out together, with no branch before their first use (issue
// #34: a branch per row left one row's latency after another's). With one
// row the caller passes wa again as wb, the same lines; its sums go unused.
template <typename B>
static inline __attribute__((always_inline)) void mv_pair(device const B* wa, device const B* wb, int ea, int eb, int k,
                                                          thread const float* xa, thread const float* xb,
                                                          thread float2& ta, thread float2& tb) {
    float a0[16], a1[16], b0[16], b1[16];
    load16(wa, ea, k, a0);
    load16(wb, ea, k, a1);
    load16(wa, eb, k, b0);
    load16(wb, eb, k, b1);
    ta = float2(mv_dot16(a0, xa), mv_dot16(a1, xa));
    tb = float2(mv_dot16(b0, xb), mv_dot16(b1, xb));
}

// mv_gelu is gelu_erf out of line: inlined at every store of every
// mat-vec instance it grew kernels.ptx.gz by 50 KB for an epilogue that
// runs once an output.
static __attribute__((noinline)) float mv_gelu(float v) { return gelu_erf(v); }

// mv_store writes one output element: the sum plus bias, through GELU
// with ge (MatVec's FlagGELUOut, which has no residual: the MLP's up
// product, no gelu launch after it), plus residual.
static inline void mv_store(device float* out, device const float* bias, device const float* res,
                            bool hb, bool hr, bool ge, int orow, int rrow, int row, float v) {
    if (hb) v += bias[row];
    if (ge) v = mv_gelu(v);
    if (hr) v += res[rrow + row];
    out[orow + row] = v;
}

// mv_shape is a product's sizes and strides as mat_vec_body reads them
// (the Product family's fields for mat_vec_impl; rope_attention_mat_vec's
// own for its output product).
struct mv_shape {
    int n, k, m, ldx, ldo, ldr, ld2;
    float eps;
    bool hb, hr, ge;
};

// mv_product_shape is a Product-family dispatch's shape (mat_vec_impl and
// mat_vec_q8x's); ld2 the Gated family's (silu_mul_mat_vec,
// gelu_mul_mat_vec) only.
template <int MODE>
static inline __attribute__((always_inline)) mv_shape mv_product_shape(constant Args& args) {
    mv_shape sh;
    sh.n = int(args.product.n);
    sh.k = int(args.product.k);
    sh.m = int(args.product.m);
    sh.ldx = int(args.product.ldx);
    sh.ldo = int(args.product.ldo);
    sh.ldr = int(args.product.ldr);
    sh.ld2 = int(args.gated.ldu);
    sh.eps = MODE == MV_RMS ? args.rms_norm_mat_vec.eps : MODE == MV_LN ? args.layer_norm_mat_vec.eps : 0.0f;
    sh.hb = has_bind(args, MAT_VEC_BIAS);
    sh.hr = has_bind(args, MAT_VEC_RES);
    sh.ge = (MODE == MV_PLAIN || MODE == MV_LN) && (args.mat_vec.flags & KFLAG_GELU_OUT) != 0u; // LN: word 6 too
    return sh;
}

// mat_vec_body is one SIMD-group's rows of a product (the geometry above);
// x3 is layer_norm_mat_vec's norm bias (x2 its weight g).
template <typename B, int MODE>
static inline __attribute__((always_inline)) void mat_vec_body(device const uchar* W, device const float* x,
                                                               device float* out, device const float* bias,
                                                               device const float* res, device const float* x2,
                                                               mv_shape sh, uint3 tgpig, uint sgitg, uint nsg,
                                                               uint lane, device const float* x3 = nullptr) {
    const int n = sh.n, k = sh.k, m = sh.m;
    const int ldx = sh.ldx, ldo = sh.ldo, ldr = sh.ldr;
    const int ld2 = sh.ld2;
    // the host always sets both constants (launch_matrix.go); clamped so
    // a bad value cannot index past the weight rows
    const int R = clamp(int(fc_mv_rows), 1, MV_MAX_ROWS);
    const int MB = clamp(int(fc_mv_batch), 1, MV_MAX_BATCH);
    const bool xal = fc_mv_xalign == 1u;
    const int b0 = int(tgpig.y) * MB;
    const int mb = min(MB, m - b0);

    const int row0 = (int(tgpig.x) * int(nsg) + int(sgitg)) * R;
    if (row0 >= n || mb <= 0) return; // no barrier follows

    // rows past n repeat the last row; their sums are discarded
    const ulong rb = row_bytes<B>(k);
    device const B* w0 = (device const B*)(W + ulong(row0) * rb);
    device const B* w1 = (device const B*)(W + ulong(min(row0 + 1, n - 1)) * rb);
    device const B* w2 = (device const B*)(W + ulong(min(row0 + 2, n - 1)) * rb);
    device const B* w3 = (device const B*)(W + ulong(min(row0 + 3, n - 1)) * rb);
    const bool hb = sh.hb, hr = sh.hr, ge = sh.ge;

    const int nc = (k + 15) / 16;
    for (int b = 0; b < MV_MAX_BATCH; ++b) {
        if (b >= mb) break;
        device const float* xr = x + (b0 + b) * ldx;
        device const float* x2r = MODE == MV_RMS || MODE == MV_LN ? x2 : x2 + (b0 + b) * ld2;
        float2 st = float2(0.0f);
        if (MODE == MV_LN) {
            st = mv_ln_stats(xr, k, nc, int(lane), xal, sh.eps);
        }
        float4 acc = float4(0.0f);
        float ss = 0.0f;
        // every lane runs the same steps: a lane without a second chunk
        // re-reads its last one and drops the sums (no divergent tail)
        for (int c = int(lane); c < nc; c += 64) {
            const bool two = c + 32 < nc;
            const int c2 = two ? c + 32 : c;
            float xa[16], xb[16];
            float sa = 0.0f, sb = 0.0f;
            if (MODE == MV_LN) {
                mv_ln16(xr, x2r, x3, 16 * c, k, xal, st, xa);
            } else {
                sa = mv_x16<MODE>(xr, x2r, 16 * c, k, xal, xa);
            }
            if (two) { // (the gated forms' activations cost exps: not for a dropped chunk)
                if (MODE == MV_LN) {
                    mv_ln16(xr, x2r, x3, 16 * c2, k, xal, st, xb);
                } else {
                    sb = mv_x16<MODE>(xr, x2r, 16 * c2, k, xal, xb);
                }
            } else {
                #pragma unroll
                for (int i = 0; i < 16; ++i) xb[i] = 0.0f;
            }
            // rows 0 and 1 together (w1 is w0 again for one row), then 2
            // and 3 (w3 is w2 again for three): products by row pairs. (The
            // weights' loads issued before x's, with the second chunk's x
            // unconditional, measured 8% slower at k = 576 and 8% faster at
            // 2048 on the H200: bench/cuda/20261129-issue34-r6.)
            float2 ta01, tb01, ta23 = float2(0.0f), tb23 = float2(0.0f);
            mv_pair(w0, R > 1 ? w1 : w0, 16 * c, 16 * c2, k, xa, xb, ta01, tb01);
            if (R > 2) {
                mv_pair(w2, R > 3 ? w3 : w2, 16 * c, 16 * c2, k, xa, xb, ta23, tb23);
            }
            const float4 ta = float4(ta01.x, R > 1 ? ta01.y : 0.0f, ta23.x, R > 3 ? ta23.y : 0.0f);
            const float4 tb = float4(tb01.x, R > 1 ? tb01.y : 0.0f, tb23.x, R > 3 ? tb23.y : 0.0f);
            acc += two ? ta + tb : ta;
            ss += two ? sa + sb : sa;
        }
        // one reduction per activation row: a scalar for one weight row, a
        // float4 for more (a quarter of the collectives of scalar sums)
        float4 s;
        if (R == 1) {
            s = float4(simd_sum(acc.x), 0.0f, 0.0f, 0.0f);
        } else {
            s = simd_sum(acc);
        }
        if (MODE == MV_RMS) {
            // the warp's lanes covered the whole x row: its RMSNorm from
            // the same loads, no pass of its own and no barrier
            s *= 1.0f / sqrt(simd_sum(ss) / float(k) + sh.eps);
        }
        if (lane == 0) {
            const int orow = (b0 + b) * ldo, rrow = (b0 + b) * ldr;
            mv_store(out, bias, res, hb, hr, ge, orow, rrow, row0, s.x);
            if (R > 1 && row0 + 1 < n) mv_store(out, bias, res, hb, hr, ge, orow, rrow, row0 + 1, s.y);
            if (R > 2 && row0 + 2 < n) mv_store(out, bias, res, hb, hr, ge, orow, rrow, row0 + 2, s.z);
            if (R > 3 && row0 + 3 < n) mv_store(out, bias, res, hb, hr, ge, orow, rrow, row0 + 3, s.w);
        }
    }
}

// Bindings: 0 W, 1 x (or gate), 2 out, 3 bias, 4 res, 5 g (or up), 6 b
// (LayerNorm's bias).
// P: 0 n, 1 k, 2 m, 3 ldx (ldg), 4 ldo, 5 ldr, 6 eps (f32; ldu for SiLU;
// flags for mat_vec and layer_norm_mat_vec, whose eps is 7).
template <typename B, int MODE>
kernel void mat_vec_impl(
        device const uchar* W [[buffer(0)]],
        device const float* x [[buffer(1)]],
        device float* out [[buffer(2)]],
        device const float* bias [[buffer(3)]],
        device const float* res [[buffer(4)]],
        device const float* x2 [[buffer(5)]],
        constant Args& args [[buffer(8)]],
        uint3 tgpig [[threadgroup_position_in_grid]],
        uint sgitg [[simdgroup_index_in_threadgroup]],
        uint nsg [[simdgroups_per_threadgroup]],
        uint lane [[thread_index_in_simdgroup]]) {
    mat_vec_body<B, MODE>(W, x, out, bias, res, x2, mv_product_shape<MODE>(args), tgpig, sgitg, nsg, lane);
}

// layer_norm_mat_vec_impl is mat_vec_impl with LayerNorm's second input,
// its bias, at binding 6 (an entry of its own, so the other forms keep
// their signature).
template <typename B>
kernel void layer_norm_mat_vec_impl(
        device const uchar* W [[buffer(0)]],
        device const float* x [[buffer(1)]],
        device float* out [[buffer(2)]],
        device const float* bias [[buffer(3)]],
        device const float* res [[buffer(4)]],
        device const float* g [[buffer(5)]],
        device const float* bn [[buffer(6)]],
        constant Args& args [[buffer(8)]],
        uint3 tgpig [[threadgroup_position_in_grid]],
        uint sgitg [[simdgroup_index_in_threadgroup]],
        uint nsg [[simdgroups_per_threadgroup]],
        uint lane [[thread_index_in_simdgroup]]) {
    mat_vec_body<B, MV_LN>(W, x, out, bias, res, g, mv_product_shape<MV_LN>(args), tgpig, sgitg, nsg, lane, bn);
}

typedef decltype(mat_vec_impl<w_f32, MV_PLAIN>) mat_vec_t;

template [[host_name("mat_vec_f32")]] kernel mat_vec_t mat_vec_impl<w_f32, MV_PLAIN>;
template [[host_name("mat_vec_f16")]] kernel mat_vec_t mat_vec_impl<w_f16, MV_PLAIN>;
template [[host_name("mat_vec_bf16")]] kernel mat_vec_t mat_vec_impl<w_bf16, MV_PLAIN>;
template [[host_name("mat_vec_q4_0")]] kernel mat_vec_t mat_vec_impl<block_q4_0, MV_PLAIN>;
template [[host_name("mat_vec_q4_1")]] kernel mat_vec_t mat_vec_impl<block_q4_1, MV_PLAIN>;
template [[host_name("mat_vec_q5_0")]] kernel mat_vec_t mat_vec_impl<block_q5_0, MV_PLAIN>;
template [[host_name("mat_vec_q5_1")]] kernel mat_vec_t mat_vec_impl<block_q5_1, MV_PLAIN>;
template [[host_name("mat_vec_q8_0")]] kernel mat_vec_t mat_vec_impl<block_q8_0, MV_PLAIN>;
template [[host_name("mat_vec_q2_k")]] kernel mat_vec_t mat_vec_impl<block_q2_k, MV_PLAIN>;
template [[host_name("mat_vec_q3_k")]] kernel mat_vec_t mat_vec_impl<block_q3_k, MV_PLAIN>;
template [[host_name("mat_vec_q4_k")]] kernel mat_vec_t mat_vec_impl<block_q4_k, MV_PLAIN>;
template [[host_name("mat_vec_q5_k")]] kernel mat_vec_t mat_vec_impl<block_q5_k, MV_PLAIN>;
template [[host_name("mat_vec_q6_k")]] kernel mat_vec_t mat_vec_impl<block_q6_k, MV_PLAIN>;
template [[host_name("mat_vec_iq4_nl")]] kernel mat_vec_t mat_vec_impl<block_iq4_nl, MV_PLAIN>;
template [[host_name("mat_vec_q8_0_rp")]] kernel mat_vec_t mat_vec_impl<rp_q8_0, MV_PLAIN>;
template [[host_name("mat_vec_q4_0_rp")]] kernel mat_vec_t mat_vec_impl<rp_q4_0, MV_PLAIN>;
template [[host_name("mat_vec_f16_a16")]] kernel mat_vec_t mat_vec_impl<a16_f16, MV_PLAIN>;

template [[host_name("rms_norm_mat_vec_f32")]] kernel mat_vec_t mat_vec_impl<w_f32, MV_RMS>;
template [[host_name("rms_norm_mat_vec_f16")]] kernel mat_vec_t mat_vec_impl<w_f16, MV_RMS>;
template [[host_name("rms_norm_mat_vec_bf16")]] kernel mat_vec_t mat_vec_impl<w_bf16, MV_RMS>;
template [[host_name("rms_norm_mat_vec_q4_0")]] kernel mat_vec_t mat_vec_impl<block_q4_0, MV_RMS>;
template [[host_name("rms_norm_mat_vec_q4_1")]] kernel mat_vec_t mat_vec_impl<block_q4_1, MV_RMS>;
template [[host_name("rms_norm_mat_vec_q5_0")]] kernel mat_vec_t mat_vec_impl<block_q5_0, MV_RMS>;
template [[host_name("rms_norm_mat_vec_q5_1")]] kernel mat_vec_t mat_vec_impl<block_q5_1, MV_RMS>;
template [[host_name("rms_norm_mat_vec_q8_0")]] kernel mat_vec_t mat_vec_impl<block_q8_0, MV_RMS>;
template [[host_name("rms_norm_mat_vec_q2_k")]] kernel mat_vec_t mat_vec_impl<block_q2_k, MV_RMS>;
template [[host_name("rms_norm_mat_vec_q3_k")]] kernel mat_vec_t mat_vec_impl<block_q3_k, MV_RMS>;
template [[host_name("rms_norm_mat_vec_q4_k")]] kernel mat_vec_t mat_vec_impl<block_q4_k, MV_RMS>;
template [[host_name("rms_norm_mat_vec_q5_k")]] kernel mat_vec_t mat_vec_impl<block_q5_k, MV_RMS>;
template [[host_name("rms_norm_mat_vec_q6_k")]] kernel mat_vec_t mat_vec_impl<block_q6_k, MV_RMS>;
template [[host_name("rms_norm_mat_vec_iq4_nl")]] kernel mat_vec_t mat_vec_impl<block_iq4_nl, MV_RMS>;
template [[host_name("rms_norm_mat_vec_q8_0_rp")]] kernel mat_vec_t mat_vec_impl<rp_q8_0, MV_RMS>;
template [[host_name("rms_norm_mat_vec_q4_0_rp")]] kernel mat_vec_t mat_vec_impl<rp_q4_0, MV_RMS>;
template [[host_name("rms_norm_mat_vec_f16_a16")]] kernel mat_vec_t mat_vec_impl<a16_f16, MV_RMS>;

// only the weight types Whisper's decoder multiplies by (plan.LayerNormMatVecType)
typedef decltype(layer_norm_mat_vec_impl<w_f32>) layer_norm_mat_vec_t;
template [[host_name("layer_norm_mat_vec_f32")]] kernel layer_norm_mat_vec_t layer_norm_mat_vec_impl<w_f32>;
template [[host_name("layer_norm_mat_vec_f16")]] kernel layer_norm_mat_vec_t layer_norm_mat_vec_impl<w_f16>;
template [[host_name("layer_norm_mat_vec_q8_0")]] kernel layer_norm_mat_vec_t layer_norm_mat_vec_impl<block_q8_0>;
template [[host_name("layer_norm_mat_vec_q8_0_rp")]] kernel layer_norm_mat_vec_t layer_norm_mat_vec_impl<rp_q8_0>;
template [[host_name("layer_norm_mat_vec_f16_a16")]] kernel layer_norm_mat_vec_t layer_norm_mat_vec_impl<a16_f16>;

template [[host_name("silu_mul_mat_vec_f32")]] kernel mat_vec_t mat_vec_impl<w_f32, MV_SILU>;
template [[host_name("silu_mul_mat_vec_f16")]] kernel mat_vec_t mat_vec_impl<w_f16, MV_SILU>;
template [[host_name("silu_mul_mat_vec_bf16")]] kernel mat_vec_t mat_vec_impl<w_bf16, MV_SILU>;
template [[host_name("silu_mul_mat_vec_q4_0")]] kernel mat_vec_t mat_vec_impl<block_q4_0, MV_SILU>;
template [[host_name("silu_mul_mat_vec_q4_1")]] kernel mat_vec_t mat_vec_impl<block_q4_1, MV_SILU>;
template [[host_name("silu_mul_mat_vec_q5_0")]] kernel mat_vec_t mat_vec_impl<block_q5_0, MV_SILU>;
template [[host_name("silu_mul_mat_vec_q5_1")]] kernel mat_vec_t mat_vec_impl<block_q5_1, MV_SILU>;
template [[host_name("silu_mul_mat_vec_q8_0")]] kernel mat_vec_t mat_vec_impl<block_q8_0, MV_SILU>;
template [[host_name("silu_mul_mat_vec_q2_k")]] kernel mat_vec_t mat_vec_impl<block_q2_k, MV_SILU>;
template [[host_name("silu_mul_mat_vec_q3_k")]] kernel mat_vec_t mat_vec_impl<block_q3_k, MV_SILU>;
template [[host_name("silu_mul_mat_vec_q4_k")]] kernel mat_vec_t mat_vec_impl<block_q4_k, MV_SILU>;
template [[host_name("silu_mul_mat_vec_q5_k")]] kernel mat_vec_t mat_vec_impl<block_q5_k, MV_SILU>;
template [[host_name("silu_mul_mat_vec_q6_k")]] kernel mat_vec_t mat_vec_impl<block_q6_k, MV_SILU>;
template [[host_name("silu_mul_mat_vec_iq4_nl")]] kernel mat_vec_t mat_vec_impl<block_iq4_nl, MV_SILU>;
template [[host_name("silu_mul_mat_vec_q8_0_rp")]] kernel mat_vec_t mat_vec_impl<rp_q8_0, MV_SILU>;
template [[host_name("silu_mul_mat_vec_q4_0_rp")]] kernel mat_vec_t mat_vec_impl<rp_q4_0, MV_SILU>;
template [[host_name("silu_mul_mat_vec_f16_a16")]] kernel mat_vec_t mat_vec_impl<a16_f16, MV_SILU>;

template [[host_name("gelu_mul_mat_vec_f32")]] kernel mat_vec_t mat_vec_impl<w_f32, MV_GELU>;
template [[host_name("gelu_mul_mat_vec_f16")]] kernel mat_vec_t mat_vec_impl<w_f16, MV_GELU>;
template [[host_name("gelu_mul_mat_vec_bf16")]] kernel mat_vec_t mat_vec_impl<w_bf16, MV_GELU>;
template [[host_name("gelu_mul_mat_vec_q4_0")]] kernel mat_vec_t mat_vec_impl<block_q4_0, MV_GELU>;
template [[host_name("gelu_mul_mat_vec_q4_1")]] kernel mat_vec_t mat_vec_impl<block_q4_1, MV_GELU>;
template [[host_name("gelu_mul_mat_vec_q5_0")]] kernel mat_vec_t mat_vec_impl<block_q5_0, MV_GELU>;
template [[host_name("gelu_mul_mat_vec_q5_1")]] kernel mat_vec_t mat_vec_impl<block_q5_1, MV_GELU>;
template [[host_name("gelu_mul_mat_vec_q8_0")]] kernel mat_vec_t mat_vec_impl<block_q8_0, MV_GELU>;
template [[host_name("gelu_mul_mat_vec_q2_k")]] kernel mat_vec_t mat_vec_impl<block_q2_k, MV_GELU>;
template [[host_name("gelu_mul_mat_vec_q3_k")]] kernel mat_vec_t mat_vec_impl<block_q3_k, MV_GELU>;
template [[host_name("gelu_mul_mat_vec_q4_k")]] kernel mat_vec_t mat_vec_impl<block_q4_k, MV_GELU>;
template [[host_name("gelu_mul_mat_vec_q5_k")]] kernel mat_vec_t mat_vec_impl<block_q5_k, MV_GELU>;
template [[host_name("gelu_mul_mat_vec_q6_k")]] kernel mat_vec_t mat_vec_impl<block_q6_k, MV_GELU>;
template [[host_name("gelu_mul_mat_vec_iq4_nl")]] kernel mat_vec_t mat_vec_impl<block_iq4_nl, MV_GELU>;
template [[host_name("gelu_mul_mat_vec_q8_0_rp")]] kernel mat_vec_t mat_vec_impl<rp_q8_0, MV_GELU>;
template [[host_name("gelu_mul_mat_vec_q4_0_rp")]] kernel mat_vec_t mat_vec_impl<rp_q4_0, MV_GELU>;
template [[host_name("gelu_mul_mat_vec_f16_a16")]] kernel mat_vec_t mat_vec_impl<a16_f16, MV_GELU>;
