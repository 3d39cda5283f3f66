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

// ---- mat_vec_rows_mma: the same products on tensor cores ----
//
// Why: at 16 rows mat_vec_rows4 makes every SIMD lane multiply each decoded
// weight by each activation row in float: the logits (49,152 × 576) took
// 256 µs of a 1.46 ms step's products in graph replay (309 µs a launch in
// ncu), gate|up 18 µs (bench/cuda/20261203-b38s29, mvbench). One mma.sync
// m16n8k16 covers the 16 rows: the weights are read once at any m, and the
// logits take ~28 µs, the step's 121 products ~0.52 ms against 1.46.
//
// Geometry: a block of MMA_WARPS warps takes 8 weight rows (one n8 tile);
// its warps split k's 32-wide q8_0 blocks round-robin (warp w: blocks w,
// w + MMA_WARPS, ...) and warp 0 adds the others' partial sums from shared
// memory in warp order. Grid ceil(n/8) · ceil(m/16) × 1 × 1: past 16 rows
// (a prompt chunk beside running streams, issue #38) block i takes tile
// i / ceil(m/16) and that tile's column of 16 activation rows i %
// ceil(m/16), so the blocks of one tile run together and its weights come
// from L2 after the first; at m ≤ 16 one column, the grid and each block's
// arithmetic as before. In a column, rows past m read row m-1 and are not
// stored.
//
// Arithmetic: inside a 32-block the k order is permuted, alike for both
// operands, so lane (g = lane/4, q = lane%4) reads weight row g's 8 codes
// at 8q (one 8-byte load in the repacked layout) and two float4 of each of
// its activation rows g and g+8: mma step s takes physical k 8q + 4s + 0..1
// as its logical 2q, 2q+1 and 8q + 4s + 2..3 as 2q+8, 2q+9. Codes enter f16
// exactly (mma::i8pair), activations as f16 hi + lo (mma::split2, 22
// bits), products summed in f32 by the tensor cores; the block's scale
// multiplies the 32-block's sum. So each row's result is its mat-vec up to
// rounding, not bit for bit (TestGPUMatVecRows on the H200: within 3e-7 of
// the output's largest magnitude, from float64 and from mat_vec_impl).
namespace mvr {

constexpr int MMA_WARPS = 8, MMA_THREADS = 32 * MMA_WARPS;

struct rpMMA { // repacked: codes of 32-block b at scales + 32b, 8-byte aligned
    __device__ static unsigned long rowBytes(int k) { return (unsigned long)(rpScaleBytes(k) + k); }
    __device__ static uint2 codes(const unsigned char* r, int b, int q, int k) { return *(const uint2*)(r + rpScaleBytes(k) + 32 * b + 8 * q); }
    __device__ static float scale(const unsigned char* r, int b, int) { return mma::h2f(((const mma::h16*)r)[b]); }
};
struct fqMMA { // the file's 34-byte blocks: 2-byte loads
    __device__ static unsigned long rowBytes(int k) { return (unsigned long)(k / 32) * 34; }
    __device__ static uint2 codes(const unsigned char* r, int b, int q, int) {
        const unsigned short* p = (const unsigned short*)(r + 34 * b + 2 + 8 * q);
        uint2 v;
        v.x = p[0] | (unsigned)p[1] << 16;
        v.y = p[2] | (unsigned)p[3] << 16;
        return v;
    }
    __device__ static float scale(const unsigned char* r, int b, int) { return mma::h2f(*(const mma::h16*)(r + 34 * b)); }
};

template <class W>
__device__ __attribute__((always_inline)) inline void matVecRowsMMA(const __hark::Params& P) {
    __shared__ __attribute__((aligned(16))) unsigned __hark_args[20];
    __shared__ float red[MMA_WARPS - 1][4][32];
    void* bufs[16];
    __hark::patch(P, bufs, __hark_args);
    const __hark::Ids id = __hark::ids(P);
    const unsigned* a = __hark_args;
    const int n = (int)a[0], k = (int)a[1], ldx = (int)a[3], ldo = (int)a[4], ldr = (int)a[5];
    int m = (int)a[2];
    const bool hb = (a[16] >> 3) & 1u, hr = (a[16] >> 4) & 1u;
    const unsigned char* Wb = (const unsigned char*)bufs[0];
    const float* x = (const float*)bufs[1];
    float* out = (float*)bufs[2];
    const float* bias = (const float*)bufs[3];
    const float* res = (const float*)bufs[4];
    const int t = (int)id.linear, warp = t / 32, lane = t % 32, g = lane >> 2, q = lane & 3;
    if (m <= 0) return;
    const int ncol = (m + 15) / 16, gi = (int)id.group[0];
    const int tile = (gi / ncol) * 8, c0 = (gi % ncol) * 16;
    if (tile >= n) return; // (the whole block: no barrier skipped by some warps)
    m = m - c0 < 16 ? m - c0 : 16;
    x += (long)c0 * ldx, out += (long)c0 * ldo, res += (long)c0 * ldr;
    const unsigned long rb = W::rowBytes(k);
    const int rw = tile + g < n ? tile + g : n - 1, ra = tile + 2 * q < n ? tile + 2 * q : n - 1, rc = tile + 2 * q + 1 < n ? tile + 2 * q + 1 : n - 1;
    const unsigned char* w = Wb + (unsigned long)rw * rb;
    const unsigned char* wa = Wb + (unsigned long)ra * rb;
    const unsigned char* wc = Wb + (unsigned long)rc * rb;
    const float* x0 = x + (long)(g < m ? g : m - 1) * ldx + 8 * q;
    const float* x1 = x + (long)(g + 8 < m ? g + 8 : m - 1) * ldx + 8 * q;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    const int nb = k / 32;
#pragma unroll 2
    for (int b = warp; b < nb; b += MMA_WARPS) {
        const int kb = 32 * b;
        const float4 xa0 = *(const float4*)(x0 + kb), xa1 = *(const float4*)(x0 + kb + 4);
        const float4 xb0 = *(const float4*)(x1 + kb), xb1 = *(const float4*)(x1 + kb + 4);
        const uint2 c = W::codes(w, b, q, k);
        const float d0 = W::scale(wa, b, k), d1 = W::scale(wc, b, k);
        unsigned h0[4], l0[4], h1[4], l1[4];
        mma::split2(xa0.x, xa0.y, &h0[0], &l0[0]);
        mma::split2(xb0.x, xb0.y, &h0[1], &l0[1]);
        mma::split2(xa0.z, xa0.w, &h0[2], &l0[2]);
        mma::split2(xb0.z, xb0.w, &h0[3], &l0[3]);
        mma::split2(xa1.x, xa1.y, &h1[0], &l1[0]);
        mma::split2(xb1.x, xb1.y, &h1[1], &l1[1]);
        mma::split2(xa1.z, xa1.w, &h1[2], &l1[2]);
        mma::split2(xb1.z, xb1.w, &h1[3], &l1[3]);
        const unsigned b00 = mma::i8pair(c.x), b01 = mma::i8pair(c.x >> 16), b10 = mma::i8pair(c.y), b11 = mma::i8pair(c.y >> 16);
        float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        mma::mma16816(s, h0, b00, b01);
        mma::mma16816(s, l0, b00, b01);
        mma::mma16816(s, h1, b10, b11);
        mma::mma16816(s, l1, b10, b11);
        acc[0] += s[0] * d0, acc[1] += s[1] * d1, acc[2] += s[2] * d0, acc[3] += s[3] * d1;
    }
    if (warp > 0) {
#pragma unroll
        for (int i = 0; i < 4; i++) red[warp - 1][i][lane] = acc[i];
    }
    asm volatile("bar.sync 0;" ::: "memory");
    if (warp > 0) return;
#pragma unroll
    for (int v = 0; v < MMA_WARPS - 1; v++)
#pragma unroll
        for (int i = 0; i < 4; i++) acc[i] += red[v][i][lane];
    const int col = tile + 2 * q;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int r = g + 8 * h;
        if (r >= m) continue;
#pragma unroll
        for (int j = 0; j < 2; j++) {
            if (col + j >= n) continue;
            float v = acc[2 * h + j];
            if (hb) v += bias[col + j];
            if (hr) v += res[(long)r * ldr + col + j];
            out[(long)r * ldo + col + j] = v;
        }
    }
}

} // namespace mvr

#define HARK_MVR_MMA_ENTRY(name, W) \
    extern "C" __global__ void __attribute__((launch_bounds(mvr::MMA_THREADS))) hark_##name(const __hark::Params P) { if (__hark::halted(P)) return; mvr::matVecRowsMMA<W>(P); }
HARK_MVR_MMA_ENTRY(mat_vec_rows_mma_q8_0, mvr::fqMMA)
HARK_MVR_MMA_ENTRY(mat_vec_rows_mma_q8_0_rp, mvr::rpMMA)
