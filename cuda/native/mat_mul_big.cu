// mat_mul_big: mat_mul (shaders/matmul.metal) of f16 weights on tensor
// cores with large tiles, for products that fill the GPU with them
// (prefill of large layers, the logits of a prompt; issue #35's GEMM
// figure). Same bindings and Args as mat_mul_mma (0 W, 1 x, 2 out, 3 bias,
// 4 res; words 0 n, 1 k, 2 m, 3 ldx, 4 ldo, 5 ldr; 16 the binding mask).
//
// Blocking: one block of 256 threads (8 warps) per 128×128 output tile
// (grid ceil(n/128) × ceil(m/128)); warp w owns the 32×64 sub-tile at m
// offset 32·(w%4), n offset 64·(w/4); k in steps of 32. Where mat_mul_mma
// stages both operands through registers one step ahead, here both go to
// shared memory by cp.async, NS-1 = 3 steps ahead, in a ring of NS stages
// (the weights' f16 tile, the activations' f32 tile); each step's
// activations are converted to f16 (hi, and for the Split entries lo,
// below) once per block, one step ahead of the products, into one of two
// f16 tiles, and both operands come out of shared memory by ldmatrix
// (64-byte rows, the 16-byte chunks XOR-swizzled so a fragment's 8 rows
// hit 8 bank groups). One barrier a step. The ring needs 112-128 KB of
// dynamic shared memory, which the host opts in to (device.sharedFits).
//
// Exactness: the weights enter exactly (f16). Split (mat_mul_big_f16):
// each activation is hi + lo, two f16 parts multiplied separately, as in
// mat_mul_mma (about 22 of float's 24 bits: the float product to ~2^-21
// of Σ|w·x|, the bound the executor's tests hold every mat_mul to).
// Without Split (mat_mul_big_f16_h, picked only by Tuning.MatMulBigHalf)
// each activation is rounded once to f16, as cuBLAS and llama.cpp's f16
// GEMM do: half the tensor-core work, error ~2^-12 of Σ|w·x|.
#include "mma.h"

namespace big {

using mma::h16;
using mma::smem, mma::cpAsync16, mma::cpCommit, mma::cpWait;
constexpr int BM = 128, BN = 128, BK = 32, THREADS = 256, NS = 4; // NS steps in flight
constexpr int TILE = BM * BK;                                      // halves of one operand tile (8 KB)

// sw is the swizzled halves offset of the 16-byte chunk c (0..3) of row r.
__device__ inline int sw(int r, int c) { return r * BK + 8 * (c ^ ((r >> 1) & 3)); }

__device__ inline void ldsm4(unsigned* r, const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem(p)));
}

// Dynamic shared memory (bytes; the launch rule asks for Smem<Split>,
// above the 48 KB a block gets without opting in): NS ring stages of the
// weights' f16 tile (8 KB, 64-byte rows) and the activations' f32 tile
// (16 KB, 128-byte rows whose 16-byte chunks are XOR-swizzled by row), then
// two f16 activation tiles (hi, and lo for Split) that step s and s+1
// alternate between.
constexpr int WTILE = TILE * 2, XTILE = BM * BK * 4, STAGE = WTILE + XTILE;
template <bool Split>
constexpr int Smem = NS * STAGE + 2 * (Split ? 2 : 1) * WTILE;

// xsw is the swizzled float offset of the 16-byte chunk c (0..7) of row r
// of an f32 activation tile.
__device__ inline int xsw(int r, int c) { return r * BK + 4 * (c ^ (r & 7)); }

extern __shared__ __attribute__((aligned(128))) unsigned char big_smem[];

template <bool Split>
__device__ __attribute__((always_inline)) inline void mat_mul(const __hark::Params& P) {
    __shared__ __attribute__((aligned(16))) unsigned __hark_args[20];
    const mma::MatMul b = mma::matMul(P, __hark_args);
    const int n = b.n, k = b.k, m = b.m, ldx = b.ldx;
    const h16* W = b.W;
    const float* x = b.x;
    const __hark::Ids& t = b.t;
    const int n0 = (int)t.group[0] * BN, m0 = (int)t.group[1] * BM;
    const int tid = (int)t.linear, warp = tid / 32, lane = tid % 32;
    const int moff = 32 * (warp % 4), noff = 64 * (warp / 4);
    const int steps = (k + BK - 1) / BK;
    constexpr int XH = (Split ? 2 : 1) * TILE; // halves of one f16 activation buffer (hi, lo)
    h16* const sx16 = (h16*)(big_smem + NS * STAGE);
    auto sW = [&](int s) { return (h16*)(big_smem + (s % NS) * STAGE); };
    auto sX = [&](int s) { return (float*)(big_smem + (s % NS) * STAGE + WTILE); };

    // step s into its ring slot: weight chunks tid, tid+256 (128 rows × 4),
    // activation chunks tid + 256·j (128 rows × 8). cp.async needs 16-byte
    // aligned rows; else element loads (stored at once, ordered by the
    // barriers like the copies).
    const bool wvec = (((unsigned long)W | (unsigned long)k * 2) & 15) == 0;
    const bool xvec = (((unsigned long)x | (unsigned long)ldx * 4) & 15) == 0;
    auto issue = [&](int s) {
        h16* dw = sW(s);
        const int k0 = s * BK;
#pragma unroll
        for (int j = 0; j < 2; j++) {
            const int ci = tid + THREADS * j, r = ci / 4, c = ci % 4, e0 = k0 + 8 * c;
            const bool ok = n0 + r < n && e0 < k;
            const h16* src = W + (long)(ok ? n0 + r : 0) * k + (ok ? e0 : 0);
            h16* d = dw + sw(r, c);
            if (wvec) cpAsync16(d, src, ok ? 16u : 0u); // k % 8 == 0: a chunk is whole or past k
            else *(uint4*)d = mma::chunk8(src, ok ? k - e0 : 0);
        }
        float* dx = sX(s);
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int ci = tid + THREADS * j, r = ci / 8, c = ci % 8, e0 = k0 + 4 * c;
            const bool ok = m0 + r < m && e0 < k;
            const float* src = x + (long)(ok ? m0 + r : 0) * ldx + (ok ? e0 : 0);
            float* d = dx + xsw(r, c);
            if (xvec) {
                cpAsync16(d, src, ok ? 4u * (unsigned)(k - e0 < 4 ? k - e0 : 4) : 0u);
            } else {
#pragma unroll
                for (int i = 0; i < 4; i++) d[i] = ok && e0 + i < k ? src[i] : 0.0f;
            }
        }
    };

    // the f32 activations of step s to f16 (row tid/2, 16 floats at
    // 16·(tid%2)): read before the step's products, split and stored after
    const int xr = tid / 2, xc = tid % 2;
    float xv[16];
    auto readX = [&](int s) {
        const float* sx = sX(s);
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const float4 v = *(const float4*)(sx + xsw(xr, 4 * xc + c));
            xv[4 * c] = v.x, xv[4 * c + 1] = v.y, xv[4 * c + 2] = v.z, xv[4 * c + 3] = v.w;
        }
    };
    auto writeX = [&](int s) {
        h16* d = sx16 + (s % 2) * XH;
#pragma unroll
        for (int c = 0; c < 2; c++) {
            unsigned h[4], l[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const float f0 = xv[8 * c + 2 * i], f1 = xv[8 * c + 2 * i + 1];
                if (Split) mma::split2(f0, f1, &h[i], &l[i]);
                else h[i] = mma::cvt2(f0, f1);
            }
            const int o = sw(xr, 2 * xc + c);
            *(uint4*)(d + o) = uint4{h[0], h[1], h[2], h[3]};
            if (Split) *(uint4*)(d + TILE + o) = uint4{l[0], l[1], l[2], l[3]};
        }
    };

    float acc[2][8][4];
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;

    // prologue: NS-1 steps in flight (one commit group each, empty past
    // the end, so the wait counts stay fixed), step 0's f16 activations
#pragma unroll
    for (int s = 0; s < NS - 1; s++) {
        if (s < steps) issue(s);
        cpCommit();
    }
    cpWait<NS - 2>();
    asm volatile("bar.sync 0;" ::: "memory");
    readX(0);
    writeX(0);

    // ldmatrix lanes: lane l gives row l%8 of 8×8 matrix l/8
    const int lr = lane % 8, lm = lane / 8;
    for (int s = 0; s < steps; s++) {
        cpWait<NS - 3>();
        // step s+1's copies and step s's f16 activations are in shared
        // memory; every warp is done with step s-1 (its ring slot, the
        // other f16 buffer)
        asm volatile("bar.sync 0;" ::: "memory");
        if (s + NS - 1 < steps) issue(s + NS - 1);
        cpCommit();
        const bool next = s + 1 < steps;
        if (next) readX(s + 1);
        const h16* w = sW(s);
        const h16* xs = sx16 + (s % 2) * XH;
#pragma unroll
        for (int kc = 0; kc < BK / 8; kc += 2) { // k16 = chunks kc, kc+1
            unsigned ah[2][4], al[2][4], b[4][4];
#pragma unroll
            for (int i = 0; i < 2; i++) { // A matrices: rows +0/+8 (lm%2), chunk +lm/2
                const int o = sw(moff + 16 * i + 8 * (lm % 2) + lr, kc + lm / 2);
                ldsm4(ah[i], xs + o);
                if (Split) ldsm4(al[i], xs + TILE + o);
            }
#pragma unroll
            for (int j = 0; j < 4; j++) // B matrices: n rows +0/+8 (lm/2), chunk +lm%2
                ldsm4(b[j], w + sw(noff + 16 * j + 8 * (lm / 2) + lr, kc + lm % 2));
#pragma unroll
            for (int i = 0; i < 2; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) {
                    const unsigned b0 = b[j / 2][2 * (j % 2)], b1 = b[j / 2][2 * (j % 2) + 1];
                    if (Split) mma::mma16816(acc[i][j], al[i], b0, b1);
                    mma::mma16816(acc[i][j], ah[i], b0, b1);
                }
        }
        if (next) writeX(s + 1);
    }

    // c0,c1: row g, columns 2q, 2q+1 of an 8-wide tile; c2,c3: row g+8
    const int g = lane / 4, q = lane % 4;
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
#pragma unroll
            for (int h = 0; h < 2; h++)
                b.store(m0 + moff + 16 * i + g + 8 * h, n0 + noff + 8 * j + 2 * q, acc[i][j][2 * h], acc[i][j][2 * h + 1]);
}

} // namespace big

#define HARK_BIG_ENTRY(name, Split) \
    extern "C" __global__ void __attribute__((launch_bounds(big::THREADS))) hark_##name(const __hark::Params P) { if (__hark::halted(P)) return; big::mat_mul<Split>(P); }
HARK_BIG_ENTRY(mat_mul_big_f16, true)
HARK_BIG_ENTRY(mat_mul_big_f16_h, false)
