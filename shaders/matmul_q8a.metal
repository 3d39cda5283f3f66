// mat_mul with 8-bit activations (issue #35): out[m, n] = x·Wᵀ + bias + res
// for q8_0, q4_0 and q5_0 weights, the activations quantized as the CPU's
// quantized GEMM quantizes them (engine/cpu/matmul_qgemm.go,
// quantizeRowQ): per row and 32-block d = max|x|/127 (float32) and codes
// round(x/d) (ties to even), the block's product an exact integer sum
// scaled by d_w·d_x. Two launches (launch_matrix.go): quantize_q8a writes
// the codes and scales into the dispatch's scratch, then
// mat_mul_q8a_<type> multiplies them. mat_mul_q8a is the MSL twin of the
// CUDA int8 tensor-core kernel mat_mul_mmq_<type>
// (cuda/native/mat_mul_mmq.cu): the same 64×128 output tile per
// 256-thread threadgroup, the same k steps of one 32-block, the same
// float operations per block (acc += float(isum)·(d_w·d_x)), so the
// executor checks the blocking and arithmetic the GPU runs.
//
// Scratch (mp = m rounded up to Q8A_BM rows, whose extra rows are zero):
// the codes, mp rows of k int8; then the scales, float d[b·mp + row].
// Bindings: 0 W, 1 x, 2 out, 3 bias, 4 res. P: 0 n, 1 k, 2 m, 3 ldx,
// 4 ldo, 5 ldr.

#define Q8A_BM 64
#define Q8A_BN 128
#define Q8A_THREADS 256

// quantize_q8a: one SIMD-group per (row, 32-block), a lane per element;
// grid (ceil(k/32 / 8), mp), 256 threads.
kernel void quantize_q8a(
        device const float* x [[buffer(1)]],
        constant Args& args [[buffer(8)]],
        device char* scratch [[buffer(10)]],
        uint3 tgpig [[threadgroup_position_in_grid]],
        uint sgitg [[simdgroup_index_in_threadgroup]],
        uint tiisg [[thread_index_in_simdgroup]]) {
    const int k = int(args.mat_mul.k), m = int(args.mat_mul.m), ldx = int(args.mat_mul.ldx);
    const int nb = k / 32, mp = (m + Q8A_BM - 1) / Q8A_BM * Q8A_BM;
    const int b = int(tgpig.x) * 8 + int(sgitg), row = int(tgpig.y);
    if (b >= nb) return; // the whole SIMD-group
    const float v = row < m ? x[long(row) * ldx + b * 32 + int(tiisg)] : 0.0f;
    const float d = simd_max(fabs(v)) / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    scratch[long(row) * k + b * 32 + int(tiisg)] = char(int(rint(v * id)));
    if (tiisg == 0) ((device float*)(scratch + long(mp) * k))[long(b) * mp + row] = d;
}

// q8a_codes writes the 32 signed codes of block b of a weight row (the
// weight is scale·code) and returns the scale; the row's type picks the
// overload.
static inline float q8a_codes(device const block_q8_0* row, int b, int k, thread int* c) {
    device const block_q8_0* p = row + b;
    for (int e = 0; e < 32; e++) c[e] = int(p->qs[e]);
    return float(p->d);
}
static inline float q8a_codes(device const block_q4_0* row, int b, int k, thread int* c) {
    device const block_q4_0* p = row + b;
    for (int j = 0; j < 16; j++) {
        c[j] = int(p->qs[j] & 15) - 8;
        c[j + 16] = int(p->qs[j] >> 4) - 8;
    }
    return float(p->d);
}
static inline float q8a_codes(device const block_q5_0* row, int b, int k, thread int* c) {
    device const block_q5_0* p = row + b;
    const uint qh = uint(p->qh[0]) | uint(p->qh[1]) << 8 | uint(p->qh[2]) << 16 | uint(p->qh[3]) << 24;
    for (int j = 0; j < 16; j++) {
        c[j] = int((p->qs[j] & 15) | ((qh >> j) & 1u) << 4) - 16;
        c[j + 16] = int((p->qs[j] >> 4) | ((qh >> (j + 16)) & 1u) << 4) - 16;
    }
    return float(p->d);
}
static inline float q8a_codes(device const rp_q8_0* row, int b, int k, thread int* c) {
    device const uchar* r = (device const uchar*)row;
    device const char* q = (device const char*)(r + rp_scale_bytes(k) + 32 * b);
    for (int e = 0; e < 32; e++) c[e] = int(q[e]);
    return float(((device const half*)r)[b]);
}
static inline float q8a_codes(device const rp_q4_0* row, int b, int k, thread int* c) {
    device const uchar* r = (device const uchar*)row;
    device const uchar* q = r + rp_scale_bytes(k) + 16 * b;
    for (int j = 0; j < 16; j++) {
        c[j] = int(q[j] & 15) - 8;
        c[j + 16] = int(q[j] >> 4) - 8;
    }
    return float(((device const half*)r)[b]);
}

// mat_mul_q8a: grid (ceil(n/Q8A_BN), ceil(m/Q8A_BM)); per k step the
// tile's activation codes and scales and its weight rows' codes and
// scales go through threadgroup memory; thread t owns rows 8·(t/32)..+7
// and columns 4·(t%32)..+3 of the tile.
template <typename B>
kernel void mat_mul_q8a_impl(
        device const uchar* W [[buffer(0)]],
        device float* out [[buffer(2)]],
        device const float* bias [[buffer(3)]],
        device const float* res [[buffer(4)]],
        constant Args& args [[buffer(8)]],
        device const char* scratch [[buffer(10)]],
        uint3 tgpig [[threadgroup_position_in_grid]],
        uint tiitg [[thread_index_in_threadgroup]]) {
    threadgroup char sa[Q8A_BM * 32];
    threadgroup char sb[Q8A_BN * 32];
    threadgroup float sdx[Q8A_BM];
    threadgroup float sdw[Q8A_BN];

    const int n = int(args.mat_mul.n), k = int(args.mat_mul.k), m = int(args.mat_mul.m);
    const int ldo = int(args.mat_mul.ldo), ldr = int(args.mat_mul.ldr);
    const int nb = k / 32, mp = (m + Q8A_BM - 1) / Q8A_BM * Q8A_BM;
    const int n0 = int(tgpig.x) * Q8A_BN, m0 = int(tgpig.y) * Q8A_BM, t = int(tiitg);
    const ulong rb = row_bytes<B>(k);
    device const float* dxs = (device const float*)(scratch + long(mp) * k);
    const int r0 = 8 * (t / 32), c0 = 4 * (t % 32);

    float acc[8][4];
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = 0.0f;

    for (int b = 0; b < nb; b++) {
        for (int i = t; i < Q8A_BM * 32; i += Q8A_THREADS) sa[i] = scratch[long(m0 + i / 32) * k + b * 32 + i % 32];
        if (t < Q8A_BM) sdx[t] = dxs[long(b) * mp + m0 + t];
        if (t < Q8A_BN) {
            // rows past n repeat the last (their columns are not stored)
            const int row = min(n0 + t, n - 1);
            int c[32];
            sdw[t] = q8a_codes((device const B*)(W + ulong(row) * rb), b, k, c);
            for (int e = 0; e < 32; e++) sb[t * 32 + e] = char(c[e]);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < 4; j++) {
                int isum = 0;
                for (int e = 0; e < 32; e++) isum += int(sa[(r0 + i) * 32 + e]) * int(sb[(c0 + j) * 32 + e]);
                acc[i][j] += float(isum) * (sdw[c0 + j] * sdx[r0 + i]);
            }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }

    const bool hb = has_bind(args, MAT_MUL_BIAS), hr = has_bind(args, MAT_MUL_RES);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) {
            const int row = m0 + r0 + i, col = n0 + c0 + j;
            if (row >= m || col >= n) continue;
            float v = acc[i][j];
            if (hb) v += bias[col];
            if (hr) v += res[long(row) * ldr + col];
            out[long(row) * ldo + col] = v;
        }
}

typedef decltype(mat_mul_q8a_impl<block_q8_0>) mat_mul_q8a_t;

template [[host_name("mat_mul_q8a_q8_0")]] kernel mat_mul_q8a_t mat_mul_q8a_impl<block_q8_0>;
template [[host_name("mat_mul_q8a_q4_0")]] kernel mat_mul_q8a_t mat_mul_q8a_impl<block_q4_0>;
template [[host_name("mat_mul_q8a_q5_0")]] kernel mat_mul_q8a_t mat_mul_q8a_impl<block_q5_0>;
template [[host_name("mat_mul_q8a_q8_0_rp")]] kernel mat_mul_q8a_t mat_mul_q8a_impl<rp_q8_0>;
template [[host_name("mat_mul_q8a_q4_0_rp")]] kernel mat_mul_q8a_t mat_mul_q8a_impl<rp_q4_0>;
