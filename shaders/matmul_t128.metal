// mat_mul_t128 (issue #35): mat_mul of f16 weights with the blocking of
// the CUDA large-tile kernels, their MSL twins, so the executor checks the
// tiles, sub-tiles, k steps and arithmetic the GPU runs:
//   mat_mul_t128_f16     twin of mat_mul_big_f16   (cuda/native/mat_mul_big.cu)
//   mat_mul_t128_f16_h   twin of mat_mul_big_f16_h
//   mat_mul_t128_wg_f16  twin of mat_mul_wgmma_f16 (cuda/native/mat_mul_wgmma.cu)
// One threadgroup of 256 threads (8 SIMD-groups) per 128×128 output tile,
// grid (ceil(n/128), ceil(m/128)). The big pair: k steps of 32, SIMD-group
// s owns the 32×64 sub-tile at m offset 32·(s%4), n offset 64·(s/4) (the
// native warps' layout). The wgmma twin: k steps of 64, SIMD-group s owns
// rows 16·s..16·s+15 and all 128 columns (the rows each warp of a
// consumer warpgroup holds of its m64n128 accumulator; the producer
// warpgroups are a copying role MSL has no use for). Each step's weights
// (f16, exact) and activations go through threadgroup memory as f16: hi =
// half(x), and for the split variant lo = half(x - hi), multiplied
// separately (lo first, as the native kernels do) and accumulated in
// float, so the products are the native kernels' own. The cp.async ring,
// ldmatrix and swizzles have no MSL counterpart: one stage, two barriers a
// step. Rows past n or m and columns past k are zero.
//
// Dynamic threadgroup memory (t128Smem in launch_matmul_big.go): the
// weights' tile and the activations' hi (and lo) tiles, 128 rows of BK
// halves each (at most Metal's 32 KB), over which each SIMD-group stages
// its results, 64 floats at a time.
// Bindings: 0 W, 1 x, 2 out, 3 bias, 4 res. P: 0 n, 1 k, 2 m, 3 ldx,
// 4 ldo, 5 ldr.
enum : int {
    T128_TILE = 128,   // output rows and columns of a threadgroup
    T128_THREADS = 256,
};

// BK: k step; MR×NC: a SIMD-group's sub-tile in 8×8 blocks (MR along m);
// SPLIT: activations as hi + lo.
template <int BK, int MR, int NC, bool SPLIT>
kernel void mat_mul_t128_impl(
        device const half* W [[buffer(0)]],
        device const float* x [[buffer(1)]],
        device float* out [[buffer(2)]],
        device const float* bias [[buffer(3)]],
        device const float* res [[buffer(4)]],
        constant Args& args [[buffer(8)]],
        threadgroup half* tg [[threadgroup(0)]],
        uint3 tgpig [[threadgroup_position_in_grid]],
        uint tiitg [[thread_index_in_threadgroup]],
        uint sgitg [[simdgroup_index_in_threadgroup]],
        uint lane [[thread_index_in_simdgroup]]) {
    const int n = int(args.mat_mul.n), k = int(args.mat_mul.k), m = int(args.mat_mul.m);
    const int ldx = int(args.mat_mul.ldx), ldo = int(args.mat_mul.ldo), ldr = int(args.mat_mul.ldr);
    const int n0 = int(tgpig.x) * T128_TILE, m0 = int(tgpig.y) * T128_TILE;
    const int sg = int(sgitg), tid = int(tiitg);
    const int sgm = T128_TILE / (8 * MR); // SIMD-groups along m
    const int moff = 8 * MR * (sg % sgm), noff = 8 * NC * (sg / sgm);
    threadgroup half* sw = tg;                     // weight rows n0.., BK halves each
    threadgroup half* sxh = tg + T128_TILE * BK;   // activation rows m0.., hi
    threadgroup half* sxl = sxh + T128_TILE * BK;  // lo (SPLIT)

    simdgroup_float8x8 c[MR][NC];
    for (int i = 0; i < MR; i++)
        for (int j = 0; j < NC; j++) c[i][j] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);

    for (int k0 = 0; k0 < k; k0 += BK) {
        threadgroup_barrier(mem_flags::mem_threadgroup); // the previous step's reads are done
        for (int e = tid; e < T128_TILE * BK; e += T128_THREADS) {
            const int r = e / BK, kk = k0 + e % BK;
            sw[e] = n0 + r < n && kk < k ? W[long(n0 + r) * k + kk] : half(0.0f);
            const float v = m0 + r < m && kk < k ? x[long(m0 + r) * ldx + kk] : 0.0f;
            const half h = half(v);
            sxh[e] = h;
            if (SPLIT) {
                sxl[e] = half(v - float(h));
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (int kk = 0; kk < BK; kk += 8) {
            simdgroup_half8x8 ah[MR], al[MR], b[NC];
            for (int i = 0; i < MR; i++) {
                simdgroup_load(ah[i], sxh + (moff + 8 * i) * BK + kk, BK);
                if (SPLIT) {
                    simdgroup_load(al[i], sxl + (moff + 8 * i) * BK + kk, BK);
                }
            }
            // the weight rows are the product's columns: a transposed load
            for (int j = 0; j < NC; j++) simdgroup_load(b[j], sw + (noff + 8 * j) * BK + kk, BK, ulong2(0, 0), true);
            for (int i = 0; i < MR; i++)
                for (int j = 0; j < NC; j++) {
                    if (SPLIT) {
                        simdgroup_multiply_accumulate(c[i][j], al[i], b[j], c[i][j]);
                    }
                    simdgroup_multiply_accumulate(c[i][j], ah[i], b[j], c[i][j]);
                }
        }
    }

    // each 8×8 block through the SIMD-group's 64 staging floats (over the
    // tiles, every read of which is behind this barrier), stored with the
    // bias and residual where it is inside the output
    threadgroup_barrier(mem_flags::mem_threadgroup);
    threadgroup float* st = (threadgroup float*)tg + 64 * sg;
    const bool hb = has_bind(args, MAT_MUL_BIAS), hr = has_bind(args, MAT_MUL_RES);
    for (int i = 0; i < MR; i++)
        for (int j = 0; j < NC; j++) {
            simdgroup_store(c[i][j], st, 8);
            simdgroup_barrier(mem_flags::mem_threadgroup);
            for (int e = int(lane); e < 64; e += 32) {
                const int row = m0 + moff + 8 * i + e / 8, col = n0 + noff + 8 * j + e % 8;
                if (row < m && col < n) {
                    float v = st[e];
                    if (hb) v += bias[col];
                    if (hr) v += res[long(row) * ldr + col];
                    out[long(row) * ldo + col] = v;
                }
            }
            simdgroup_barrier(mem_flags::mem_threadgroup);
        }
}

typedef decltype(mat_mul_t128_impl<32, 4, 8, true>) mat_mul_t128_t;

template [[host_name("mat_mul_t128_f16")]] kernel mat_mul_t128_t mat_mul_t128_impl<32, 4, 8, true>;
template [[host_name("mat_mul_t128_f16_h")]] kernel mat_mul_t128_t mat_mul_t128_impl<32, 4, 8, false>;
template [[host_name("mat_mul_t128_wg_f16")]] kernel mat_mul_t128_t mat_mul_t128_impl<64, 2, 16, false>;
