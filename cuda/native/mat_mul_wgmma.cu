// mat_mul_wgmma: mat_mul (shaders/matmul.metal) of f16 weights on
// Hopper's warpgroup tensor-core products (wgmma, sm_90a), for the
// products mat_mul_big takes on older GPUs (issue #35's GEMM figure). Same
// bindings and Args as mat_mul_big (0 W, 1 x, 2 out, 3 bias, 4 res; words
// 0 n, 1 k, 2 m, 3 ldx, 4 ldo, 5 ldr; 16 the binding mask).
//
// Blocking: one block of 256 threads (two warpgroups) per 128×128 output
// tile (grid ceil(n/128) × ceil(m/128)); warpgroup g owns output rows
// 64g..64g+63 of the tile and all 128 columns, one
// wgmma.m64n128k16 accumulator (64 floats a thread). k in steps of 64
// through a ring of NS stages in dynamic shared memory, filled by every
// thread's cp.async NS-2 steps ahead: the weights' f16 tile (128 rows of
// 128 bytes in wgmma's 128-byte-swizzle K-major layout, read by the tensor
// cores through a shared-memory descriptor) and the activations' f32 tile
// (256-byte rows, 16-byte chunks XOR-swizzled by row so the fragment loads
// hit distinct banks). Each thread reads its A fragments (the mma.sync
// m16n8k16 A layout per warp) from the f32 tile, rounds them to f16 in
// registers and issues the step's four products with A from registers;
// one product group stays in flight (wgmma.wait_group 1) while the next
// step's fragments are converted. One barrier a step: past it every
// warpgroup has finished step s-2's products, so its stage is refilled.
//
// ptxas reports (C7513) that it serializes these products, since the next
// step's A registers are written while a group is in flight. A variant
// with A in shared memory too (each warpgroup converting its rows to an
// f16 tile in the same swizzled layout, a descriptor for A, one more
// warpgroup barrier a step) had no C7513 and ran slower: 0.107 ms against
// 0.092 at 4096×4096×512 (BENCHMARKS.md, issue #35 fifth round).
//
// Exactness: the weights enter exactly (f16); each activation is rounded
// once to f16 (as cuBLAS and llama.cpp's f16 GEMMs do: ~2^-12 of Σ|w·x|,
// the bound mat_mul_big_f16_h is held to), accumulated in f32.
#include "mma.h"

namespace wg {

using mma::cpAsync16, mma::cpCommit, mma::cpWait, mma::h16, mma::smem, mma::store2;
constexpr int BM = 128, BN = 128, BK = 64, THREADS = 256, NS = 4;
constexpr int WTILE = BN * BK * 2, XTILE = BM * BK * 4, STAGE = WTILE + XTILE; // 16 KB + 32 KB
// Smem is the dynamic shared memory a launch asks for: the ring, and
// 1 KB to align it to the 1024 bytes the 128-byte swizzle needs.
constexpr int Smem = NS * STAGE + 1024;

// wsw is the byte offset of the 16-byte chunk c (0..7) of weight row r in
// the 128-byte-swizzle layout (8-row atoms of 1024 bytes, chunk c of row r
// at c ^ r%8).
__device__ inline int wsw(int r, int c) { return r * 128 + ((c ^ (r & 7)) << 4); }
// xsw is the byte offset of the chunk c (0..15) of activation row r.
__device__ inline int xsw(int r, int c) { return r * 256 + ((c ^ (r & 7)) << 4); }

// desc is the wgmma descriptor of a K-major 128-byte-swizzled operand at
// shared address a: start address, leading offset 1 (unused by swizzled
// K-major layouts), stride 1024 bytes between 8-row atoms, swizzle mode 1
// (128 bytes). A k16 slice inside the atom is the same descriptor 32
// bytes on.
__device__ inline unsigned long desc(unsigned a) {
    return (unsigned long)((a & 0x3FFFF) >> 4) | 1ul << 16 | (unsigned long)(1024 >> 4) << 32 | 1ul << 62;
}

// mma64 is d += A·B (scale-d 1) for one m64n128k16 product of the
// warpgroup: A from registers (a: this thread's m16n8k16 A fragment of
// its warp's 16 rows), B (k16 × n128, K-major) from shared memory by
// descriptor b. scale-d is an immediate and the descriptors come from
// pin, so that no other instruction defines a product's inputs between
// the fence and the commit.
__device__ inline void mma64(float* d, const unsigned* a, unsigned long b) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, {%64,%65,%66,%67}, %68, 1, 1, 1, 0;"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b)
                 : "memory");
}
// pin returns v through a volatile asm, so the descriptor arithmetic stays
// above the wgmma.fence that follows it.
__device__ inline unsigned long pin(unsigned long v) {
    asm volatile("mov.b64 %0, %0;" : "+l"(v));
    return v;
}
__device__ inline void wgFence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ inline void wgCommit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ inline void wgWait(float* d) {
    // the accumulators as operands, so nothing reads them above the wait
    asm volatile("wgmma.wait_group.sync.aligned %64;" : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]) : "n"(N) : "memory");
}

extern __shared__ __attribute__((aligned(1024))) unsigned char wg_smem[];

__device__ __attribute__((always_inline)) inline void mat_mul(const __hark::Params& P) {
    __shared__ __attribute__((aligned(16))) unsigned __hark_args[20];
    void* bufs[16];
    __hark::patch(P, bufs, __hark_args);
    const __hark::Ids t = __hark::ids(P);
    const unsigned* a = __hark_args;
    const int n = (int)a[0], k = (int)a[1], m = (int)a[2], ldx = (int)a[3], ldo = (int)a[4], ldr = (int)a[5];
    const unsigned mask = a[16];
    const h16* W = (const h16*)bufs[0];
    const float* x = (const float*)bufs[1];
    float* out = (float*)bufs[2];
    const float* bias = (const float*)bufs[3];
    const float* res = (const float*)bufs[4];
    const int n0 = (int)t.group[0] * BN, m0 = (int)t.group[1] * BM;
    const int tid = (int)t.linear, wgi = tid / 128, warp = (tid / 32) % 4, lane = tid % 32;
    const int steps = (k + BK - 1) / BK;
    const unsigned s0 = smem(wg_smem), base = (s0 + 1023) & ~1023u;
    unsigned char* const ring = wg_smem + (base - s0);
    auto sW = [&](int s) { return ring + (s % NS) * STAGE; };
    auto sX = [&](int s) { return ring + (s % NS) * STAGE + WTILE; };

    // step s into its ring slot: weight chunks tid + 256·j (128 rows × 8),
    // activation chunks tid + 256·j (128 rows × 16). cp.async needs 16-byte
    // aligned rows; else element loads (stored at once, ordered like the
    // copies by the barrier and the proxy fence).
    const bool wvec = (((unsigned long)W | (unsigned long)k * 2) & 15) == 0;
    const bool xvec = (((unsigned long)x | (unsigned long)ldx * 4) & 15) == 0;
    auto issue = [&](int s) __attribute__((always_inline)) {
        unsigned char* dw = sW(s);
        const int k0 = s * BK;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int ci = tid + THREADS * j, r = ci / 8, c = ci % 8, e0 = k0 + 8 * c;
            const bool ok = n0 + r < n && e0 < k;
            const h16* src = W + (long)(ok ? n0 + r : 0) * k + (ok ? e0 : 0);
            unsigned char* d = dw + wsw(r, c);
            if (wvec) {
                cpAsync16(d, src, ok ? 16u : 0u); // k % 8 == 0: a chunk is whole or past k
            } else {
                unsigned v[4];
#pragma unroll
                for (int i = 0; i < 4; i++)
                    v[i] = mma::pack(ok && e0 + 2 * i < k ? src[2 * i] : (h16)0, ok && e0 + 2 * i + 1 < k ? src[2 * i + 1] : (h16)0);
                *(uint4*)d = uint4{v[0], v[1], v[2], v[3]};
            }
        }
        unsigned char* dx = sX(s);
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const int ci = tid + THREADS * j, r = ci / 16, c = ci % 16, e0 = k0 + 4 * c;
            const bool ok = m0 + r < m && e0 < k;
            const float* src = x + (long)(ok ? m0 + r : 0) * ldx + (ok ? e0 : 0);
            float* d = (float*)(dx + xsw(r, c));
            if (xvec) {
                cpAsync16(d, src, ok ? 4u * (unsigned)(k - e0 < 4 ? k - e0 : 4) : 0u);
            } else {
#pragma unroll
                for (int i = 0; i < 4; i++) d[i] = ok && e0 + i < k ? src[i] : 0.0f;
            }
        }
    };

    // this thread's A fragments of step s, rounded to f16: row r (and
    // r+8) of the tile, columns 16kk + 2q (+1, +8, +9) for the four k16
    // slices kk
    const int g = lane / 4, q = lane % 4, ar = 64 * wgi + 16 * warp + g;
    auto loadA = [&](int s, unsigned* af) __attribute__((always_inline)) {
        const unsigned char* sx = sX(s);
#pragma unroll
        for (int kk = 0; kk < 4; kk++)
#pragma unroll
            for (int h = 0; h < 2; h++) { // columns +0, +8
                const int c = 4 * kk + q / 2 + 2 * h, o = 8 * (q % 2);
                const float2 v0 = *(const float2*)(sx + xsw(ar, c) + o);
                const float2 v1 = *(const float2*)(sx + xsw(ar + 8, c) + o);
                af[4 * kk + 2 * h] = mma::cvt2(v0.x, v0.y);
                af[4 * kk + 2 * h + 1] = mma::cvt2(v1.x, v1.y);
            }
    };

    float acc[64];
#pragma unroll
    for (int i = 0; i < 64; i++) acc[i] = 0.0f;

    // prologue: NS-2 steps in flight (one commit group each, empty past the
    // end, so the wait counts stay fixed)
#pragma unroll
    for (int s = 0; s < NS - 2; s++) {
        if (s < steps) issue(s);
        cpCommit();
    }
    // step s: wait for its copies, make them visible to the tensor cores
    // (the async proxy), refill the stage of step s-2 (every warpgroup
    // passed step s-1's wait_group 1, so step s-2's products are done),
    // convert and issue. af alternates between two register sets so that
    // step s's fragments are written while step s-1's products still read
    // theirs.
    auto step = [&](int s, unsigned* af) __attribute__((always_inline)) {
        cpWait<NS - 3>();
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        asm volatile("bar.sync 0;" ::: "memory");
        if (s + NS - 2 < steps) issue(s + NS - 2);
        cpCommit();
        loadA(s, af);
        const unsigned wb = smem(sW(s));
        unsigned long bd[4];
#pragma unroll
        for (int kk = 0; kk < 4; kk++) bd[kk] = pin(desc(wb + 32 * kk));
        wgFence();
#pragma unroll
        for (int kk = 0; kk < 4; kk++) mma64(acc, af + 4 * kk, bd[kk]);
        wgCommit();
        wgWait<1>(acc);
    };
    unsigned af0[16], af1[16];
    for (int s = 0; s < steps; s += 2) {
        step(s, af0);
        if (s + 1 < steps) step(s + 1, af1);
    }
    wgWait<0>(acc);

    // accumulator j (n8 slice j/4): acc[4j'], acc[4j'+1] row g, columns
    // 8j' + 2q, +1; acc[4j'+2], acc[4j'+3] row g+8
    const bool hb = (mask >> 3) & 1u, hr = (mask >> 4) & 1u;
#pragma unroll
    for (int j = 0; j < 16; j++) {
        const int col = n0 + 8 * j + 2 * q;
        if (col >= n) continue;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int row = m0 + ar + 8 * h;
            if (row < m) store2(out, bias, res, hb, hr, ldo, ldr, row, col, n, acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
        }
    }
}

} // namespace wg

extern "C" __global__ void __attribute__((launch_bounds(wg::THREADS, 1))) hark_mat_mul_wgmma_f16(const __hark::Params P) { wg::mat_mul(P); }
