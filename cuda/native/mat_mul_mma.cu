// mat_mul_mma: mat_mul (shaders/matmul.metal) on tensor cores, native CUDA
// for the sm_80 module (cuda/gen compiles it with clang 19 at PTX ISA 7.0).
// out[m, n] = x·Wᵀ + bias + res, as mat_mul, with mat_mul's blocking
// (mm_core in common.metal), so the two are comparable tile for tile: one
// block of 128 threads per 32×64 output tile (grid ceil(n/64) × ceil(m/32),
// mat_mul's launch), warp w owning the 16×32 sub-tile at m offset
// 16·(w/2), n offset 32·(w%2), k in steps of 32 through shared memory.
// Where mm_core multiplies 8×8 simdgroup matrices, a warp issues
// mma.sync m16n8k16 (f16 operands, f32 accumulation), four per 16-wide k
// step and activation half (below).
//
// Exactness: the weights enter the tensor cores exactly (f16 as stored;
// q8_0's and q4_0's integer quants are exact in f16, their block scale is
// applied in f32 to the block's partial sums; bf16 scaled by a power of
// two per 32-element block, wbf16). The f32 activations are
// split into two f16 parts, hi = f16(x) and lo = f16(x - hi), and both are
// multiplied (two mma a step), so each activation carries 22 of float's 24
// significant bits: the result is the float product to about 2^-21 of
// Σ|w·x|, not the 2^-11 of a single f16 rounding. |x| must stay below
// 65504 (f16's range); LLM and Whisper activations are far below it.
//
// Bindings: 0 W, 1 x, 2 out, 3 bias, 4 res. Args words: 0 n, 1 k, 2 m,
// 3 ldx, 4 ldo, 5 ldr; 16 the binding mask.
//
// conv1d_mma_<type> is conv1d (shaders/conv1d.metal) the same way: conv1d
// is mm_core over the im2col view of its input (row = output step,
// column kk = ci·kw + j), so its tensor-core form is this kernel with the
// activation fetch gathering that view (zero outside the input) and
// conv1d's epilogue (bias only). Bindings: 0 W, 1 x, 2 bias, 3 out. Args
// words: 0 cin, 1 cout, 2 T, 3 kw, 4 stride, 5 pad, 6 flags (bit 0: x
// channel-major), 7 ldx, 8 ldo; 16 the binding mask.
#include "mma.h"

namespace mma {

constexpr int BM = 32, BN = 64, BK = 32, THREADS = 128;
constexpr int LD = BK + 8; // shared row stride in halves: 20 words, no bank conflict between a fragment's rows

// Weight formats: load16 writes the 16 elements e0..e0+15 of row as f16
// pairs (exact) and returns the block's scale (1 for f16).
struct wf16 {
    static constexpr bool scaled = false;
    __device__ static unsigned long rowBytes(int k) { return (unsigned long)k * 2; }
    __device__ static float load16(const unsigned char* row, int e0, int k, unsigned* o) {
        const h16* p = (const h16*)row + e0;
        if (e0 + 16 <= k && ((unsigned long)p & 15) == 0) { // two 16-byte loads
            const uint4 a = ((const uint4*)p)[0], b = ((const uint4*)p)[1];
            o[0] = a.x, o[1] = a.y, o[2] = a.z, o[3] = a.w, o[4] = b.x, o[5] = b.y, o[6] = b.z, o[7] = b.w;
        } else {
#pragma unroll
            for (int i = 0; i < 8; i++)
                o[i] = pack(e0 + 2 * i < k ? p[2 * i] : (h16)0, e0 + 2 * i + 1 < k ? p[2 * i + 1] : (h16)0);
        }
        return 1.0f;
    }
};
// bf16: 8-bit significands, which f16 holds exactly once scaled: each
// 32-element block (one k step) is divided by the power of two 2^s that
// puts its largest magnitude in [2^14, 2^15), and 2^s is the block's
// scale, applied in f32 to its partial sums as q8_0's is. Elements more
// than 2^24 below the block's largest lose bits to f16's subnormals: at
// most 2^-38 of that largest element, below float's rounding of the sum.
// Both halves of a block compute the same s (each reads all 32 exponents).
struct wbf16 {
    static constexpr bool scaled = true;
    __device__ static unsigned long rowBytes(int k) { return (unsigned long)k * 2; }
    __device__ static float load16(const unsigned char* row, int e0, int k, unsigned* o) {
        const unsigned short* p = (const unsigned short*)row;
        const int b0 = e0 & ~31, b1 = b0 + 32 < k ? b0 + 32 : k;
        int emax = 0;
        for (int i = b0; i < b1; i++) {
            const int e = (p[i] >> 7) & 0xff;
            emax = e > emax ? e : emax;
        }
        const int s = emax - 141 > -126 ? emax - 141 : -126; // 2^s and 2^-s stay normal floats
        const float down = __builtin_bit_cast(float, (unsigned)(127 - s) << 23);
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int e = e0 + 2 * i;
            const float a = e < k ? __builtin_bit_cast(float, (unsigned)p[e] << 16) * down : 0.0f;
            const float b = e + 1 < k ? __builtin_bit_cast(float, (unsigned)p[e + 1] << 16) * down : 0.0f;
            o[i] = pack(f2h(a), f2h(b));
        }
        return __builtin_bit_cast(float, (unsigned)(127 + s) << 23);
    }
};
// q8_0: 34-byte blocks of 32, an f16 scale d and 32 int8 quants (2-byte
// aligned: read as 16-bit pairs).
struct wq8_0 {
    static constexpr bool scaled = true;
    __device__ static unsigned long rowBytes(int k) { return (unsigned long)(k / 32) * 34; }
    __device__ static float load16(const unsigned char* row, int e0, int, unsigned* o) {
        const unsigned short* b = (const unsigned short*)(row + (e0 / 32) * 34);
        const unsigned short* q = b + 1 + (e0 % 32) / 2;
#pragma unroll
        for (int i = 0; i < 8; i++) o[i] = i8pair(q[i]);
        return h2f(b[0]);
    }
};
// q4_0: 18-byte blocks of 32, an f16 scale d and 16 bytes of nibbles
// (element j low nibble of byte j, element 16+j its high nibble), minus 8.
struct wq4_0 {
    static constexpr bool scaled = true;
    __device__ static unsigned long rowBytes(int k) { return (unsigned long)(k / 32) * 18; }
    __device__ static float load16(const unsigned char* row, int e0, int, unsigned* o) {
        const unsigned short* b = (const unsigned short*)(row + (e0 / 32) * 18);
        const int shift = e0 % 32 == 0 ? 0 : 4;
#pragma unroll
        for (int i = 0; i < 8; i++) o[i] = u4pair<0x4140>((unsigned)b[1 + i] >> shift);
        return h2f(b[0]);
    }
};

// Repacked q8_0 and q4_0 rows (shaders/common.metal's rp_q8_0, rp_q4_0;
// shaders/repack.go): the row's f16 block scales padded to 16 bytes, then
// its quants block after block, so a chunk's quants are one 16-byte load.
__device__ inline int rpScaleBytes(int k) { return ((k / 32) * 2 + 15) & ~15; }
struct wq8_0r {
    static constexpr bool scaled = true;
    __device__ static unsigned long rowBytes(int k) { return (unsigned long)(rpScaleBytes(k) + k); }
    __device__ static float load16(const unsigned char* row, int e0, int k, unsigned* o) {
        const uint4 q = *(const uint4*)(row + rpScaleBytes(k) + e0);
        const unsigned w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            o[2 * i] = i8pair(w[i]);
            o[2 * i + 1] = i8pair(w[i] >> 16);
        }
        return h2f(((const unsigned short*)row)[e0 / 32]);
    }
};
struct wq4_0r {
    static constexpr bool scaled = true;
    __device__ static unsigned long rowBytes(int k) { return (unsigned long)(rpScaleBytes(k) + k / 2); }
    __device__ static float load16(const unsigned char* row, int e0, int k, unsigned* o) {
        const uint4 q = *(const uint4*)(row + rpScaleBytes(k) + 16 * (e0 / 32));
        const int shift = e0 % 32 == 0 ? 0 : 4;
        const unsigned w[4] = {q.x >> shift, q.y >> shift, q.z >> shift, q.w >> shift};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            o[2 * i] = u4pair<0x4140>(w[i]);
            o[2 * i + 1] = u4pair<0x4342>(w[i]);
        }
        return h2f(((const unsigned short*)row)[e0 / 32]);
    }
};

// Conv: conv1d's arguments, im2col gather and epilogue (above).
// always_inline: called out of line, the entry passed P as a pointer to a
// 328-byte local copy of the parameter, written by every thread.
template <class W, bool Conv>
__device__ __attribute__((always_inline)) inline void mat_mul(const __hark::Params& P) {
    __shared__ __attribute__((aligned(16))) unsigned __hark_args[20];
    __shared__ __attribute__((aligned(16))) h16 sw[BN * LD];
    __shared__ __attribute__((aligned(16))) h16 sxh[BM * LD];
    __shared__ __attribute__((aligned(16))) h16 sxl[BM * LD];
    __shared__ float sd[BN];
    void* bufs[16];
    __hark::patch(P, bufs, __hark_args);
    const __hark::Ids t = __hark::ids(P);
    const unsigned* a = __hark_args;
    // conv1d: n = cout, k = cin·kw, m = output steps
    const int cin = (int)a[0], T = (int)a[2], kw = (int)a[3], stride = (int)a[4], pad = (int)a[5];
    const bool chanmaj = a[6] & 1u;
    const int n = Conv ? (int)a[1] : (int)a[0], k = Conv ? cin * kw : (int)a[1];
    const int m = Conv ? (T + 2 * pad - kw) / stride + 1 : (int)a[2];
    const int ldx = Conv ? (int)a[7] : (int)a[3], ldo = Conv ? (int)a[8] : (int)a[4], ldr = (int)a[5];
    const unsigned mask = a[16];
    const unsigned char* Wb = (const unsigned char*)bufs[0];
    const float* x = (const float*)bufs[1];
    float* out = (float*)bufs[Conv ? 3 : 2];
    const float* bias = (const float*)bufs[Conv ? 2 : 3];
    const float* res = (const float*)bufs[4];
    const int n0 = (int)t.group[0] * BN, m0 = (int)t.group[1] * BM;
    const int tid = (int)t.linear, warp = tid / 32, lane = tid % 32, g = lane / 4, q = lane % 4;
    const int moff = 16 * (warp / 2), noff = 32 * (warp % 2);

    // this thread's weight chunk (half a row of the k step) and activations (8)
    const int wn = tid / 2, wh = tid % 2, xm = tid / 4, xq = tid % 4;
    const bool wok = n0 + wn < n, xok = m0 + xm < m;
    const unsigned char* wrow = Wb + (unsigned long)(wok ? n0 + wn : 0) * W::rowBytes(k);
    const float* xrow = x + (long)(xok ? m0 + xm : 0) * ldx;

    float acc[4][4];
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
        for (int i = 0; i < 4; i++) acc[j][i] = 0.0f;

    // the next k step's weights and activations are loaded into registers
    // while the tensor cores work on this one
    unsigned wv[8];
    float wd = 0.0f, xv[8];
    auto fetch = [&](int k0) {
        const int e0 = k0 + 16 * wh;
        if (wok && e0 < k) {
            wd = W::load16(wrow, e0, k, wv);
        } else {
#pragma unroll
            for (int i = 0; i < 8; i++) wv[i] = 0;
        }
        const int x0 = k0 + 8 * xq;
        const float* xp = xrow + x0;
        if (Conv) { // im2col: column kk = ci·kw + j is input step row·stride + j - pad of channel ci
            int ci = x0 / kw, j = x0 - ci * kw;
            const int t0 = (m0 + xm) * stride - pad;
#pragma unroll
            for (int i = 0; i < 8; i++) {
                const int tt = t0 + j;
                xv[i] = xok && x0 + i < k && tt >= 0 && tt < T ? x[chanmaj ? (long)ci * ldx + tt : (long)tt * ldx + ci] : 0.0f;
                if (++j == kw) j = 0, ci++;
            }
        } else if (xok && x0 + 8 <= k && ((unsigned long)xp & 15) == 0) {
            const float4 a = ((const float4*)xp)[0], b = ((const float4*)xp)[1];
            xv[0] = a.x, xv[1] = a.y, xv[2] = a.z, xv[3] = a.w, xv[4] = b.x, xv[5] = b.y, xv[6] = b.z, xv[7] = b.w;
        } else {
#pragma unroll
            for (int i = 0; i < 8; i++) xv[i] = xok && x0 + i < k ? xp[i] : 0.0f;
        }
    };
    fetch(0);
    for (int k0 = 0; k0 < k; k0 += BK) {
        asm volatile("bar.sync 0;" ::: "memory"); // the previous step's reads are done
        {
            unsigned* dst = (unsigned*)(sw + wn * LD + 16 * wh);
#pragma unroll
            for (int i = 0; i < 8; i++) dst[i] = wv[i];
            if (W::scaled && wh == 0) sd[wn] = wd;
            unsigned* dh = (unsigned*)(sxh + xm * LD + 8 * xq);
            unsigned* dl = (unsigned*)(sxl + xm * LD + 8 * xq);
#pragma unroll
            for (int i = 0; i < 8; i += 2) split2(xv[i], xv[i + 1], &dh[i / 2], &dl[i / 2]);
        }
        asm volatile("bar.sync 0;" ::: "memory");
        if (k0 + BK < k) fetch(k0 + BK);
        float part[4][4];
        float (*c)[4] = W::scaled ? part : acc;
        if (W::scaled) {
#pragma unroll
            for (int j = 0; j < 4; j++)
#pragma unroll
                for (int i = 0; i < 4; i++) part[j][i] = 0.0f;
        }
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            unsigned ah[4], al[4];
            const int r0 = moff + g, c0 = kk + 2 * q;
            ah[0] = word(sxh, LD, r0, c0), ah[1] = word(sxh, LD, r0 + 8, c0), ah[2] = word(sxh, LD, r0, c0 + 8), ah[3] = word(sxh, LD, r0 + 8, c0 + 8);
            al[0] = word(sxl, LD, r0, c0), al[1] = word(sxl, LD, r0 + 8, c0), al[2] = word(sxl, LD, r0, c0 + 8), al[3] = word(sxl, LD, r0 + 8, c0 + 8);
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const int nr = noff + 8 * j + g;
                const unsigned b0 = word(sw, LD, nr, c0), b1 = word(sw, LD, nr, c0 + 8);
                mma16816(c[j], al, b0, b1);
                mma16816(c[j], ah, b0, b1);
            }
        }
        if (W::scaled) { // this k step is one block: its scale per weight row
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const float d0 = sd[noff + 8 * j + 2 * q], d1 = sd[noff + 8 * j + 2 * q + 1];
                acc[j][0] += d0 * part[j][0];
                acc[j][1] += d1 * part[j][1];
                acc[j][2] += d0 * part[j][2];
                acc[j][3] += d1 * part[j][3];
            }
        }
    }

    // c0,c1: row g, columns 2q, 2q+1 of the 8-wide tile; c2,c3: row g+8
    const bool hb = (mask >> (Conv ? 2 : 3)) & 1u, hr = !Conv && ((mask >> 4) & 1u);
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int row = m0 + moff + g + 8 * (i / 2), col = n0 + noff + 8 * j + 2 * q + i % 2;
            if (row >= m || col >= n) continue;
            float v = acc[j][i];
            if (hb) v += bias[col];
            if (hr) v += res[(long)row * ldr + col];
            out[(long)row * ldo + col] = v;
        }
}

} // namespace mma

#define HARK_MMA_ENTRY(name, W, Conv) \
    extern "C" __global__ void __attribute__((launch_bounds(mma::THREADS))) hark_##name(const __hark::Params P) { if (__hark::halted(P)) return; mma::mat_mul<W, Conv>(P); }
HARK_MMA_ENTRY(mat_mul_mma_f16, mma::wf16, false)
HARK_MMA_ENTRY(mat_mul_mma_bf16, mma::wbf16, false)
HARK_MMA_ENTRY(mat_mul_mma_q8_0, mma::wq8_0, false)
HARK_MMA_ENTRY(mat_mul_mma_q4_0, mma::wq4_0, false)
HARK_MMA_ENTRY(mat_mul_mma_q8_0_rp, mma::wq8_0r, false)
HARK_MMA_ENTRY(mat_mul_mma_q4_0_rp, mma::wq4_0r, false)
HARK_MMA_ENTRY(conv1d_mma_f16, mma::wf16, true)
HARK_MMA_ENTRY(conv1d_mma_q8_0, mma::wq8_0, true)
HARK_MMA_ENTRY(conv1d_mma_q4_0, mma::wq4_0, true)
