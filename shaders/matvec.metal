// mat_vec, rms_norm_mat_vec, silu_mul_mat_vec, gelu_mul_mat_vec: out[m, n] = x'·Wᵀ + bias + res
// for small m (decode, beams), one instantiation per weight type
// (launch rules: launch_matrix.go).
//
// Geometry: threadgroups of nsg SIMD-groups; SIMD-group s of threadgroup
// (gx, gy) computes weight rows [(gx*nsg + s)*R, +R) for the x rows
// [gy*MB, +MB). The 32 lanes stride over 16-element chunks of the row, so a
// SIMD-group reads its R weight rows once (coalesced across lanes) for all
// MB activation rows, and simd_sum reduces each dot product. R and MB are
// function constants 20 and 21 (Tuning.MatVecRows, Tuning.MatVecBatch).
//
// x' is x (mat_vec), rmsnorm(x)⊙g (rms_norm_mat_vec: the threadgroup
// computes each of its x rows' norm once, then scales on the fly) or
// silu(gate)⊙up (silu_mul_mat_vec) or gelu_tanh(gate)⊙up (gelu_mul_mat_vec). Activations stay float: the GPU
// multiplies dequantised weights by float x, where the CPU quantises x to
// q8_0/q8_1/q8_K first (see launch_matrix.go).

constant uint fc_mv_rows [[function_constant(20)]];
constant uint fc_mv_batch [[function_constant(21)]];

#define MV_MAX_ROWS 4
#define MV_MAX_BATCH 8
#define MV_MAX_SG 32


enum { MV_PLAIN = 0, MV_RMS = 1, MV_SILU = 2, MV_GELU = 3 };

static inline float mv_silu(float g) { return g / (1.0f + exp(-g)); }

// Bindings: 0 W, 1 x (or gate), 2 out, 3 bias, 4 res, 5 g (or up).
// P: 0 n, 1 k, 2 m, 3 ldx (ldg), 4 ldo, 5 ldr, 6 eps (f32; ldu for SiLU).
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
        uint tiitg [[thread_index_in_threadgroup]],
        uint sgitg [[simdgroup_index_in_threadgroup]],
        uint nsg [[simdgroups_per_threadgroup]],
        uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float tg_part[MODE == MV_RMS ? MV_MAX_SG : 1][MV_MAX_BATCH];

    // the Product layout family's fields, shared by every mode
    const int n = int(args.product.n), k = int(args.product.k), m = int(args.product.m);
    const int ldx = int(args.product.ldx), ldo = int(args.product.ldo), ldr = int(args.product.ldr);
    const int ld2 = int(args.gated.ldu); // the Gated family (silu_mul_mat_vec, gelu_mul_mat_vec) only
    // the host always sets both constants (launch_matrix.go); clamped so
    // a bad value cannot index past the accumulators
    const int R = clamp(int(fc_mv_rows), 1, MV_MAX_ROWS);
    const int MB = clamp(int(fc_mv_batch), 1, MV_MAX_BATCH);
    const int b0 = int(tgpig.y) * MB;
    const int mb = min(MB, m - b0);

    // RMSNorm: one sum of squares per x row, shared by all SIMD-groups.
    float inv[MV_MAX_BATCH];
    if (MODE == MV_RMS) {
        const float eps = args.rms_norm_mat_vec.eps;
        for (int b = 0; b < MV_MAX_BATCH; ++b) {
            if (b >= mb) break;
            device const float* xr = x + (b0 + b) * ldx;
            float ss = 0.0f;
            for (int i = int(tiitg); i < k; i += int(nsg) * 32) ss += xr[i] * xr[i];
            ss = simd_sum(ss);
            if (lane == 0) tg_part[sgitg][b] = ss;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (int b = 0; b < MV_MAX_BATCH; ++b) {
            if (b >= mb) break;
            float ss = 0.0f;
            for (uint s = 0; s < nsg; ++s) ss += tg_part[s][b];
            inv[b] = 1.0f / sqrt(ss / float(k) + eps);
        }
    }

    const int row0 = (int(tgpig.x) * int(nsg) + int(sgitg)) * R;
    if (row0 >= n || mb <= 0) return; // no barrier follows

    const ulong rb = row_bytes<B>(k);
    float acc[MV_MAX_ROWS][MV_MAX_BATCH]; // rows past R stay 0 (reduced as float4)
    for (int r = 0; r < MV_MAX_ROWS; ++r)
        for (int b = 0; b < MV_MAX_BATCH; ++b) acc[r][b] = 0.0f;

    const int nc = (k + 15) / 16;
    for (int c = int(lane); c < nc; c += 32) {
        const int e0 = 16 * c;
        float wv[MV_MAX_ROWS][16];
        for (int r = 0; r < MV_MAX_ROWS; ++r) {
            if (r >= R) break;
            // rows past n repeat the last row; their sums are discarded
            const int row = min(row0 + r, n - 1);
            load16((device const B*)(W + ulong(row) * rb), e0, k, wv[r]);
        }
        for (int b = 0; b < MV_MAX_BATCH; ++b) {
            if (b >= mb) break;
            float xv[16];
            device const float* xr = x + (b0 + b) * ldx + e0;
            const int cnt = min(16, k - e0);
            if (cnt == 16) { // every chunk of a quantized row
                for (int i = 0; i < 16; ++i) xv[i] = xr[i];
            } else {
                for (int i = 0; i < 16; ++i) xv[i] = i < cnt ? xr[i] : 0.0f;
            }
            if (MODE == MV_RMS) {
                for (int i = 0; i < cnt; ++i) xv[i] *= inv[b] * x2[e0 + i];
            } else if (MODE == MV_SILU) {
                device const float* ur = x2 + (b0 + b) * ld2 + e0;
                for (int i = 0; i < cnt; ++i) xv[i] = mv_silu(xv[i]) * ur[i];
            } else if (MODE == MV_GELU) {
                device const float* ur = x2 + (b0 + b) * ld2 + e0;
                for (int i = 0; i < cnt; ++i) xv[i] = gelu_tanh(xv[i]) * ur[i];
            }
            for (int r = 0; r < MV_MAX_ROWS; ++r) {
                if (r >= R) break;
                float s = 0.0f;
                for (int i = 0; i < 16; ++i) s += wv[r][i] * xv[i];
                acc[r][b] += s;
            }
        }
    }

    // (the r and b loops run to the compile-time maxima and break at R and
    // mb: with constant trip counts the compiler unrolls them and keeps
    // wv, acc and inv in registers; bounded by the function constants
    // alone, where those are not compile-time (CUDA), the arrays were
    // indexed at run time and went to local memory)
    // one reduction per activation row covers all R weight rows (a float4
    // simd_sum: a quarter of the SIMD-group collectives of scalar sums)
    const bool hb = has_bind(args, MAT_VEC_BIAS), hr = has_bind(args, MAT_VEC_RES);
    for (int b = 0; b < MV_MAX_BATCH; ++b) {
        if (b >= mb) break;
        const float4 s = simd_sum(float4(acc[0][b], acc[1][b], acc[2][b], acc[3][b]));
        if (lane == 0) {
            for (int r = 0; r < MV_MAX_ROWS; ++r) {
                if (r >= R || row0 + r >= n) break;
                const int row = row0 + r;
                float v = s[r];
                if (hb) v += bias[row];
                if (hr) v += res[(b0 + b) * ldr + row];
                out[(b0 + b) * ldo + row] = v;
            }
        }
    }
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
