// mat_vec_rows: MatVec (no GELU-out flag) of q8_0 weights over 2 to 16
// activation rows, the batch plan's mat-vec steps (issue #38; sm_80
// module; launch rule: shaders/launch_matrix.go, Tuning.MatVecRowsNative).
//
// Why: mat_vec_impl's SIMD-group takes its x rows one after another and
// re-loads and re-decodes its weight chunks for each (from the cache after
// the first): at 16 rows (4 a threadgroup, Tuning.MatVecBatchMany) a
// 576-wide product took 18.6 µs against 7 for one row (H200, SmolLM2
// shape; BENCHMARKS.md, b38s28), 61% of the 16-row step. Here a warp
// decodes its two weight rows' chunks once and multiplies them by each of
// its threadgroup's MB activation rows (4 or 8: mat_vec_rows4_, rows8_;
// Tuning.MatVecRowsNativeBatch), whose sums stay in registers.
//
// Geometry and arithmetic: mat_vec_impl's at two weight rows a warp (the
// cuda family's Tuning.MatVecRows below 2,048 wide), 4 warps a block (128
// threads), grid ceil(n/8) × ceil(m/MB). A lane takes the 16-element
// chunks lane, lane+32 of a step of 64, as mat_vec_body does, and each
// activation row's sums are formed in its order (a chunk's 16 products
// summed in element order, the two chunks' sums added, then to the
// running sum; the warp's butterfly), so a row's result is mat_vec's up
// to the compiler's contraction of those sums. Activations are float,
// rows 16-byte aligned (the launch rule checks), k a multiple of 32.
//
// Bindings: 0 W, 1 x, 2 out, 3 bias, 4 res. Args words: 0 n, 1 k, 2 m,
// 3 ldx, 4 ldo, 5 ldr; 16 the binding mask.
#include "mma.h"

namespace mvr {

constexpr int WARPS = 4, THREADS = 32 * WARPS;

__device__ inline int rpScaleBytes(int k) { return ((k / 32) * 2 + 15) & ~15; }

// q8 decodes four int8 codes of v (little-endian) times d, as rp_q8_word.
__device__ inline void q8(unsigned v, float d, float* o) {
    o[0] = (float)((int)(v << 24) >> 24) * d;
    o[1] = (float)((int)(v << 16) >> 24) * d;
    o[2] = (float)((int)(v << 8) >> 24) * d;
    o[3] = (float)((int)v >> 24) * d;
}

// Weight layouts: chunk c (16 elements) of a row, decoded.
struct rp8 { // repacked q8_0 (shaders/repack.go): scales, then 16-byte chunks
    __device__ static unsigned long rowBytes(int k) { return (unsigned long)(rpScaleBytes(k) + k); }
    __device__ static void load(const unsigned char* r, int c, int k, float* o) {
        const float d = mma::h2f(((const mma::h16*)r)[c / 2]);
        const uint4 q = *(const uint4*)(r + rpScaleBytes(k) + 16 * c);
        q8(q.x, d, o);
        q8(q.y, d, o + 4);
        q8(q.z, d, o + 8);
        q8(q.w, d, o + 12);
    }
};
struct fq8 { // q8_0 in the file's 34-byte blocks: 2-byte loads
    __device__ static unsigned long rowBytes(int k) { return (unsigned long)(k / 32) * 34; }
    __device__ static void load(const unsigned char* r, int c, int, float* o) {
        const unsigned short* p = (const unsigned short*)(r + 34 * (c / 2));
        const float d = mma::h2f(p[0]);
#pragma unroll
        for (int i = 0; i < 4; i++) q8(p[1 + 8 * (c % 2) + 2 * i] | (unsigned)p[2 + 8 * (c % 2) + 2 * i] << 16, d, o + 4 * i);
    }
};

__device__ inline float dot16(const float* w, const float* x) {
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < 16; i++) s += w[i] * x[i];
    return s;
}

__device__ inline void x16(const float* xr, int c, float* o) {
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const float4 v = *(const float4*)(xr + 16 * c + 4 * j);
        o[4 * j] = v.x, o[4 * j + 1] = v.y, o[4 * j + 2] = v.z, o[4 * j + 3] = v.w;
    }
}

__device__ inline float warpSum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = v + __nvvm_shfl_sync_bfly_f32(0xffffffffu, v, o, 0x1f); // simd_sum's order
    return v;
}

template <class W, int MB>
__device__ __attribute__((always_inline)) inline void matVecRows(const __hark::Params& P) {
    __shared__ __attribute__((aligned(16))) unsigned __hark_args[20];
    void* bufs[16];
    __hark::patch(P, bufs, __hark_args);
    const __hark::Ids id = __hark::ids(P);
    const unsigned* a = __hark_args;
    const int n = (int)a[0], k = (int)a[1], m = (int)a[2], ldx = (int)a[3], ldo = (int)a[4], ldr = (int)a[5];
    const bool hb = (a[16] >> 3) & 1u, hr = (a[16] >> 4) & 1u;
    const unsigned char* Wb = (const unsigned char*)bufs[0];
    const float* x = (const float*)bufs[1];
    float* out = (float*)bufs[2];
    const float* bias = (const float*)bufs[3];
    const float* res = (const float*)bufs[4];
    const int t = (int)id.linear, warp = t / 32, lane = t % 32;
    const int row0 = ((int)id.group[0] * WARPS + warp) * 2;
    const int b0 = (int)id.group[1] * MB, mb = m - b0 < MB ? m - b0 : MB;
    if (row0 >= n || mb <= 0) return;
    const unsigned long rb = W::rowBytes(k);
    // a row past n repeats the last; its sums are not stored
    const unsigned char* w0 = Wb + (unsigned long)row0 * rb;
    const unsigned char* w1 = Wb + (unsigned long)(row0 + 1 < n ? row0 + 1 : n - 1) * rb;
    const float* xr = x + (long)b0 * ldx;
    const int nc = k / 16;

    float acc0[MB], acc1[MB];
#pragma unroll
    for (int b = 0; b < MB; b++) acc0[b] = 0.0f, acc1[b] = 0.0f;
    for (int c = lane; c < nc; c += 64) {
        const bool two = c + 32 < nc;
        const int c2 = two ? c + 32 : c;
        float a0[16], a1[16], e0[16], e1[16];
        W::load(w0, c, k, a0);
        W::load(w1, c, k, a1);
        W::load(w0, c2, k, e0);
        W::load(w1, c2, k, e1);
#pragma unroll
        for (int b = 0; b < MB; b++) {
            if (b < mb) {
                float xa[16], xb[16];
                x16(xr + (long)b * ldx, c, xa);
                x16(xr + (long)b * ldx, c2, xb);
                const float ta0 = dot16(a0, xa), ta1 = dot16(a1, xa);
                const float tb0 = dot16(e0, xb), tb1 = dot16(e1, xb);
                acc0[b] += two ? ta0 + tb0 : ta0;
                acc1[b] += two ? ta1 + tb1 : ta1;
            }
        }
    }
#pragma unroll
    for (int b = 0; b < MB; b++) {
        if (b < mb) {
            const float s0 = warpSum(acc0[b]), s1 = warpSum(acc1[b]);
            if (lane == 0) {
                const long orow = (long)(b0 + b) * ldo, rrow = (long)(b0 + b) * ldr;
                float v = s0;
                if (hb) v += bias[row0];
                if (hr) v += res[rrow + row0];
                out[orow + row0] = v;
                if (row0 + 1 < n) {
                    v = s1;
                    if (hb) v += bias[row0 + 1];
                    if (hr) v += res[rrow + row0 + 1];
                    out[orow + row0 + 1] = v;
                }
            }
        }
    }
}

} // namespace mvr

#define HARK_MVR_ENTRY(name, W, MB) \
    extern "C" __global__ void __attribute__((launch_bounds(mvr::THREADS))) hark_##name(const __hark::Params P) { if (__hark::halted(P)) return; mvr::matVecRows<W, MB>(P); }
HARK_MVR_ENTRY(mat_vec_rows4_q8_0, mvr::fq8, 4)
HARK_MVR_ENTRY(mat_vec_rows4_q8_0_rp, mvr::rp8, 4)
HARK_MVR_ENTRY(mat_vec_rows8_q8_0, mvr::fq8, 8)
HARK_MVR_ENTRY(mat_vec_rows8_q8_0_rp, mvr::rp8, 8)
