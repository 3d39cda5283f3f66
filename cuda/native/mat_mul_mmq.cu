// mat_mul_mmq: mat_mul of q8_0, q4_0 and q5_0 weights on int8 tensor cores
// with 8-bit activations, as llama.cpp's MMQ (issue #35; sm_80 module).
// The launch rule (shaders/launch_matmul_q8a.go) runs quantize_q8a first
// (shaders/matmul_q8a.metal, translated: per row and 32-block d =
// max|x|/127, codes round(x/d), the CPU quantized GEMM's quantization)
// into the dispatch's scratch: mp = m rounded up to 64 rows of k int8
// codes, then float d[b·mp + row]. This kernel multiplies those codes by
// the weights' (q4_0, q5_0 quants minus their offset, as signed bytes)
// with mma.sync m16n8k32 (s8 operands, s32 accumulation): each k step is
// one 32-block, so its exact integer sum is scaled once, acc +=
// float(isum)·(d_w·d_x), the CPU quantized GEMM's operations
// (engine/cpu/matmul_qgemm.go) and those of the MSL twin mat_mul_q8a,
// which has this tiling: 64×128 output tiles per 256-thread block (grid
// ceil(n/128) × mp/64), warp w owning the 32×32 sub-tile at m offset
// 32·(w/4), n offset 32·(w%4).
//
// Pipeline: two stages in shared memory. The activation codes and scales
// and the repacked weights (rows 16-byte aligned: shaders/repack.go) come
// by cp.async one step ahead; the file-layout weights (2-byte aligned
// blocks) by registers one step ahead, decoded to signed codes on the
// store. Fragments by ldmatrix from 48-byte rows (a fragment's 8 rows of
// 16 bytes hit 8 distinct bank groups); repacked q4_0 keeps its 16 bytes
// of nibbles in shared memory and expands them at the fragment load.
//
// Bindings: 0 W, 2 out, 3 bias, 4 res, 10 scratch. Args words: 0 n, 1 k,
// 2 m, 4 ldo, 5 ldr; 16 the binding mask.
#include "mma.h"

namespace mmq {

using mma::h16, mma::cpAsync16;
constexpr int BM = 64, BN = 128, THREADS = 256, LD = 48;

// Stage is one k step's operands.
struct Stage {
    signed char a[BM * LD]; // activation codes, a row's 32 then 16 unused
    signed char b[BN * LD]; // weight codes (repacked q4_0: its 16 nibble bytes)
    float dx[BM];
    unsigned dw[BN]; // the weight scale: the word holding its f16 (repacked), or the float
};

__device__ inline void cpAsync4(void* dst, const void* src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(mma::smem(dst)), "l"(src) : "memory");
}

__device__ inline void ldsm4(const void* p, unsigned* r) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(mma::smem(p)));
}

// mma16832 is D = A·B + C, m16n8k32, s8 operands, s32 accumulation.
// Fragments (g = lane/4, q = lane%4): a0 row g, k 4q..4q+3; a1 row g+8;
// a2 row g, k 16+4q..; a3 row g+8, k 16+4q..; b0 k 4q..4q+3 of column g,
// b1 k 16+4q..; c0,c1 row g, columns 2q, 2q+1; c2,c3 row g+8.
__device__ inline void mma16832(int* c, const unsigned* a, unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// signedCodes turns four unsigned codes (bytes, each below 0x70 + off)
// into the signed bytes code - off: no byte borrows from its neighbour.
template <unsigned off>
__device__ inline unsigned signedCodes(unsigned v) { return ((v | 0x80808080u) - off * 0x01010101u) ^ 0x80808080u; }

// spread4 moves bits 0..3 of x to bit 4 of bytes 0..3 (q5_0's fifth bits).
__device__ inline unsigned spread4(unsigned x) { return (x & 1u) << 4 | (x & 2u) << 11 | (x & 4u) << 18 | (x & 8u) << 25; }

__device__ inline int rpScaleBytes(int k) { return ((k / 32) * 2 + 15) & ~15; }

// Weight formats. Async ones issue cp.async for a step (issue) and read
// their scale from the copied word (scale); register ones load a step's
// half-row into registers (fetch: this thread's row r = t/2, half h =
// t%2) and store its signed codes (put).
struct wq8r { // repacked q8_0: the row's 32 codes as two 16-byte copies
    static constexpr bool async = true, nibbles = false;
    __device__ static unsigned long rowBytes(int k) { return (unsigned long)(rpScaleBytes(k) + k); }
    __device__ static void issue(Stage& S, const unsigned char* wb, const unsigned char* ws, int t, int k, int b) {
        cpAsync16(&S.b[(t / 2) * LD + 16 * (t % 2)], wb + rpScaleBytes(k) + 32 * b + 16 * (t % 2), 16);
        if (t >= 128) cpAsync4(&S.dw[t - 128], ws + 4 * (b / 2));
    }
    __device__ static float scale(unsigned w, int b) { return mma::h2f((h16)(w >> (16 * (b & 1)))); }
};
struct wq4r { // repacked q4_0: the row's 16 bytes of nibbles
    static constexpr bool async = true, nibbles = true;
    __device__ static unsigned long rowBytes(int k) { return (unsigned long)(rpScaleBytes(k) + k / 2); }
    __device__ static void issue(Stage& S, const unsigned char* wb, const unsigned char* ws, int t, int k, int b) {
        if (t < 128) cpAsync16(&S.b[t * LD], wb + rpScaleBytes(k) + 16 * b, 16);
        else cpAsync4(&S.dw[t - 128], ws + 4 * (b / 2));
    }
    __device__ static float scale(unsigned w, int b) { return mma::h2f((h16)(w >> (16 * (b & 1)))); }
};
__device__ inline float fbits(unsigned w, int) { return __builtin_bit_cast(float, w); }
struct wq8 { // q8_0, 34-byte blocks: half h is codes 16h..16h+15
    static constexpr bool async = false, nibbles = false;
    __device__ static unsigned long rowBytes(int k) { return (unsigned long)(k / 32) * 34; }
    __device__ static float fetch(const unsigned char* row, int b, int h, unsigned* w) {
        const unsigned short* p = (const unsigned short*)(row + 34 * b);
#pragma unroll
        for (int i = 0; i < 4; i++) w[i] = p[1 + 8 * h + 2 * i] | (unsigned)p[2 + 8 * h + 2 * i] << 16;
        return mma::h2f(p[0]);
    }
    __device__ static void put(Stage& S, int r, int h, const unsigned* w) { *(uint4*)&S.b[r * LD + 16 * h] = uint4{w[0], w[1], w[2], w[3]}; }
    __device__ static float scale(unsigned w, int b) { return fbits(w, b); }
};
struct wq4 { // q4_0, 18-byte blocks: half h is bytes 8h..8h+7, codes 8h.. (low nibbles) and 16+8h.. (high)
    static constexpr bool async = false, nibbles = false;
    __device__ static unsigned long rowBytes(int k) { return (unsigned long)(k / 32) * 18; }
    __device__ static float fetch(const unsigned char* row, int b, int h, unsigned* w) {
        const unsigned short* p = (const unsigned short*)(row + 18 * b);
        const unsigned q0 = p[1 + 4 * h] | (unsigned)p[2 + 4 * h] << 16, q1 = p[3 + 4 * h] | (unsigned)p[4 + 4 * h] << 16;
        w[0] = signedCodes<8>(q0 & 0x0F0F0F0Fu), w[1] = signedCodes<8>(q1 & 0x0F0F0F0Fu);
        w[2] = signedCodes<8>(q0 >> 4 & 0x0F0F0F0Fu), w[3] = signedCodes<8>(q1 >> 4 & 0x0F0F0F0Fu);
        return mma::h2f(p[0]);
    }
    __device__ static void put(Stage& S, int r, int h, const unsigned* w) {
        *(uint2*)&S.b[r * LD + 8 * h] = uint2{w[0], w[1]};
        *(uint2*)&S.b[r * LD + 16 + 8 * h] = uint2{w[2], w[3]};
    }
    __device__ static float scale(unsigned w, int b) { return fbits(w, b); }
};
struct wq5 { // q5_0, 22-byte blocks (d, 4 bytes of fifth bits, 16 of nibbles): as q4_0, plus the fifth bits
    static constexpr bool async = false, nibbles = false;
    __device__ static unsigned long rowBytes(int k) { return (unsigned long)(k / 32) * 22; }
    __device__ static float fetch(const unsigned char* row, int b, int h, unsigned* w) {
        const unsigned short* p = (const unsigned short*)(row + 22 * b);
        const unsigned qh = p[1] | (unsigned)p[2] << 16;
        const unsigned q0 = p[3 + 4 * h] | (unsigned)p[4 + 4 * h] << 16, q1 = p[5 + 4 * h] | (unsigned)p[6 + 4 * h] << 16;
        w[0] = signedCodes<16>((q0 & 0x0F0F0F0Fu) | spread4(qh >> (8 * h)));
        w[1] = signedCodes<16>((q1 & 0x0F0F0F0Fu) | spread4(qh >> (8 * h + 4)));
        w[2] = signedCodes<16>((q0 >> 4 & 0x0F0F0F0Fu) | spread4(qh >> (16 + 8 * h)));
        w[3] = signedCodes<16>((q1 >> 4 & 0x0F0F0F0Fu) | spread4(qh >> (20 + 8 * h)));
        return mma::h2f(p[0]);
    }
    __device__ static void put(Stage& S, int r, int h, const unsigned* w) { wq4::put(S, r, h, w); }
    __device__ static float scale(unsigned w, int b) { return fbits(w, b); }
};

// always_inline: called out of line, the entry passed P through a local copy.
template <class W>
__device__ __attribute__((always_inline)) inline void mat_mul(const __hark::Params& P) {
    __shared__ __attribute__((aligned(16))) unsigned __hark_args[20];
    __shared__ __attribute__((aligned(16))) Stage st[2];
    void* bufs[16];
    __hark::patch(P, bufs, __hark_args);
    const __hark::Ids id = __hark::ids(P);
    const unsigned* a = __hark_args;
    const int n = (int)a[0], k = (int)a[1], m = (int)a[2], ldo = (int)a[4], ldr = (int)a[5];
    const bool hb = (a[16] >> 3) & 1u, hr = (a[16] >> 4) & 1u;
    const unsigned char* Wb = (const unsigned char*)bufs[0];
    float* out = (float*)bufs[2];
    const float* bias = (const float*)bufs[3];
    const float* res = (const float*)bufs[4];
    const signed char* codes = (const signed char*)bufs[10];
    const int nb = k / 32, mp = (m + BM - 1) / BM * BM;
    const float* dxs = (const float*)(codes + (long)mp * k);
    const int n0 = (int)id.group[0] * BN, m0 = (int)id.group[1] * BM;
    const int t = (int)id.linear, warp = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;
    const int moff = 32 * (warp / 4), noff = 32 * (warp % 4);

    // this thread's copies: activation half-row t/2 (t < 128) or a 16-byte
    // piece of the scales (128 <= t < 144); the weight row it copies or
    // loads (rows past n repeat the last: their columns are not stored)
    // and, async, the row whose scale word it copies (t >= 128)
    const signed char* xa = codes + (long)(m0 + t / 2) * k + 16 * (t % 2);
    const unsigned long rb = W::rowBytes(k);
    const int wr = W::async && W::nibbles ? t % 128 : t / 2;
    const int wrow = n0 + wr < n ? n0 + wr : n - 1, srow = n0 + t % 128 < n ? n0 + t % 128 : n - 1;
    const unsigned char* wb = Wb + (unsigned long)wrow * rb;
    const unsigned char* ws = Wb + (unsigned long)srow * rb;
    auto issue = [&](int b, Stage& S) {
        if (t < 128) mma::cpAsync16(&S.a[(t / 2) * LD + 16 * (t % 2)], xa + 32 * b, 16);
        else if (t < 144) mma::cpAsync16(&S.dx[4 * (t - 128)], dxs + (long)b * mp + m0 + 4 * (t - 128), 16);
        if constexpr (W::async) W::issue(S, wb, ws, t, k, b);
    };
    unsigned wv[4];
    float wd = 0.0f;
    auto put = [&](Stage& S) {
        if constexpr (!W::async) {
            W::put(S, t / 2, t % 2, wv);
            if (t % 2 == 0) S.dw[t / 2] = __builtin_bit_cast(unsigned, wd);
        }
    };

    float acc[2][4][4];
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;

    issue(0, st[0]);
    mma::cpCommit();
    if constexpr (!W::async) {
        wd = W::fetch(wb, 0, t % 2, wv);
        put(st[0]);
    }
    for (int b = 0; b < nb; b++) {
        Stage& S = st[b & 1];
        if (b + 1 < nb) {
            issue(b + 1, st[(b + 1) & 1]);
            if constexpr (!W::async) wd = W::fetch(wb, b + 1, t % 2, wv);
        }
        mma::cpCommit();
        mma::cpWait<1>(); // step b's copies are done (the newest group is step b+1's)
        asm volatile("bar.sync 0;" ::: "memory");

        unsigned af[2][4], bf[4][2];
#pragma unroll
        for (int i = 0; i < 2; i++) ldsm4(&S.a[(moff + 16 * i + lane % 8 + 8 * (lane / 8 % 2)) * LD + 16 * (lane / 16)], af[i]);
        if constexpr (W::nibbles) {
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const unsigned w = *(const unsigned*)&S.b[(noff + 8 * j + g) * LD + 4 * q];
                bf[j][0] = signedCodes<8>(w & 0x0F0F0F0Fu);
                bf[j][1] = signedCodes<8>(w >> 4 & 0x0F0F0F0Fu);
            }
        } else {
#pragma unroll
            for (int jj = 0; jj < 2; jj++) {
                unsigned r[4];
                ldsm4(&S.b[(noff + 16 * jj + lane % 8 + 8 * (lane / 16)) * LD + 16 * (lane / 8 % 2)], r);
                bf[2 * jj][0] = r[0], bf[2 * jj][1] = r[1], bf[2 * jj + 1][0] = r[2], bf[2 * jj + 1][1] = r[3];
            }
        }
        float dx[2][2], dw[4][2];
#pragma unroll
        for (int i = 0; i < 2; i++) dx[i][0] = S.dx[moff + 16 * i + g], dx[i][1] = S.dx[moff + 16 * i + g + 8];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            dw[j][0] = W::scale(S.dw[noff + 8 * j + 2 * q], b);
            dw[j][1] = W::scale(S.dw[noff + 8 * j + 2 * q + 1], b);
        }
#pragma unroll
        for (int i = 0; i < 2; i++)
#pragma unroll
            for (int j = 0; j < 4; j++) {
                int c[4] = {0, 0, 0, 0};
                mma16832(c, af[i], bf[j][0], bf[j][1]);
                // the CPU's order: float(isum)·(d_w·d_x), added to the sum
#pragma unroll
                for (int e = 0; e < 4; e++) acc[i][j][e] += (float)c[e] * (dw[j][e % 2] * dx[i][e / 2]);
            }
        put(st[(b + 1) & 1]);
        asm volatile("bar.sync 0;" ::: "memory"); // this stage's reads are done before step b+2's copies
    }

#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e += 2) {
                const int row = m0 + moff + 16 * i + g + 8 * (e / 2), col = n0 + noff + 8 * j + 2 * q;
                if (row < m && col < n) mma::store2(out, bias, res, hb, hr, ldo, ldr, row, col, n, acc[i][j][e], acc[i][j][e + 1]);
            }
}

} // namespace mmq

#define HARK_MMQ_ENTRY(name, W) \
    extern "C" __global__ void __attribute__((launch_bounds(mmq::THREADS))) hark_##name(const __hark::Params P) { if (__hark::halted(P)) return; mmq::mat_mul<W>(P); }
HARK_MMQ_ENTRY(mat_mul_mmq_q8_0, mmq::wq8)
HARK_MMQ_ENTRY(mat_mul_mmq_q4_0, mmq::wq4)
HARK_MMQ_ENTRY(mat_mul_mmq_q5_0, mmq::wq5)
HARK_MMQ_ENTRY(mat_mul_mmq_q8_0_rp, mmq::wq8r)
HARK_MMQ_ENTRY(mat_mul_mmq_q4_0_rp, mmq::wq4r)
