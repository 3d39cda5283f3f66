// mat_mul: out[m, n] = x·Wᵀ + bias + res for prefill chunks and encoder
// windows, with simdgroup_matrix 8x8 tiles over dequantised weight tiles
// (mm_core in common.metal). One threadgroup of MM_THREADS threads per
// MM_BM×MM_BN output tile; grid (ceil(n/MM_BN), ceil(m/MM_BM)).
//
// Bindings: 0 W, 1 x, 2 out, 3 bias, 4 res. P: 0 n, 1 k, 2 m, 3 ldx, 4 ldo, 5 ldr.
template <typename B>
kernel void mat_mul_impl(
        device const uchar* W [[buffer(0)]],
        device const float* x [[buffer(1)]],
        device float* out [[buffer(2)]],
        device const float* bias [[buffer(3)]],
        device const float* res [[buffer(4)]],
        constant Args& args [[buffer(8)]],
        uint3 tgpig [[threadgroup_position_in_grid]],
        uint tiitg [[thread_index_in_threadgroup]],
        uint sgitg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float sw[MM_BK * MM_BN];
    threadgroup float sx[MM_BM * MM_BK];

    mm_shape s;
    s.n = int(args.mat_mul.n); s.k = int(args.mat_mul.k); s.m = int(args.mat_mul.m); s.ldx = int(args.mat_mul.ldx);
    s.conv = 0; s.cin = 0; s.T = 0; s.kw = 1; s.stride = 1; s.pad = 0; s.chanmaj = 0;
    const int ldo = int(args.mat_mul.ldo), ldr = int(args.mat_mul.ldr);
    const int n0 = int(tgpig.x) * MM_BN, m0 = int(tgpig.y) * MM_BM;

    mm_core<B>(W, x, s, n0, m0, sw, sx, tiitg, sgitg);

    const bool hb = has_bind(args, MAT_MUL_BIAS), hr = has_bind(args, MAT_MUL_RES);
    for (int idx = int(tiitg); idx < MM_BM * MM_BN; idx += MM_THREADS) {
        const int row = m0 + idx / MM_BN, col = n0 + idx % MM_BN;
        if (row >= s.m || col >= s.n) continue;
        float v = sw[idx];
        if (hb) v += bias[col];
        if (hr) v += res[row * ldr + col];
        out[row * ldo + col] = v;
    }
}

typedef decltype(mat_mul_impl<w_f32>) mat_mul_t;

template [[host_name("mat_mul_f32")]] kernel mat_mul_t mat_mul_impl<w_f32>;
template [[host_name("mat_mul_f16")]] kernel mat_mul_t mat_mul_impl<w_f16>;
template [[host_name("mat_mul_bf16")]] kernel mat_mul_t mat_mul_impl<w_bf16>;
template [[host_name("mat_mul_q4_0")]] kernel mat_mul_t mat_mul_impl<block_q4_0>;
template [[host_name("mat_mul_q4_1")]] kernel mat_mul_t mat_mul_impl<block_q4_1>;
template [[host_name("mat_mul_q5_0")]] kernel mat_mul_t mat_mul_impl<block_q5_0>;
template [[host_name("mat_mul_q5_1")]] kernel mat_mul_t mat_mul_impl<block_q5_1>;
template [[host_name("mat_mul_q8_0")]] kernel mat_mul_t mat_mul_impl<block_q8_0>;
template [[host_name("mat_mul_q2_k")]] kernel mat_mul_t mat_mul_impl<block_q2_k>;
template [[host_name("mat_mul_q3_k")]] kernel mat_mul_t mat_mul_impl<block_q3_k>;
template [[host_name("mat_mul_q4_k")]] kernel mat_mul_t mat_mul_impl<block_q4_k>;
template [[host_name("mat_mul_q5_k")]] kernel mat_mul_t mat_mul_impl<block_q5_k>;
template [[host_name("mat_mul_q6_k")]] kernel mat_mul_t mat_mul_impl<block_q6_k>;
template [[host_name("mat_mul_iq4_nl")]] kernel mat_mul_t mat_mul_impl<block_iq4_nl>;
template [[host_name("mat_mul_q8_0_rp")]] kernel mat_mul_t mat_mul_impl<rp_q8_0>;
template [[host_name("mat_mul_q4_0_rp")]] kernel mat_mul_t mat_mul_impl<rp_q4_0>;
