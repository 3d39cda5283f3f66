// mat_mul_wgmma: mat_mul (shaders/matmul.metal) of f16 weights on
// Hopper's warpgroup tensor-core products (wgmma, sm_90a), for the
// products mat_mul_big takes on older GPUs (issue #35's GEMM figure). Same
// bindings and Args as mat_mul_big (mma::MatMul).
//
// Blocking: one block of 512 threads (four warpgroups) per 128×128 output
// tile (grid ceil(n/128) × ceil(m/128)), split by role. Warpgroups 0 and 1
// produce, taking alternate k steps of 64: into a ring of NS stages in
// dynamic shared memory, each stage the weights' f16 tile (cp.async) and
// the activations' tile, loaded as f32 into registers two steps ahead,
// rounded to f16 and stored; both tiles are 128 rows of 128 bytes in
// wgmma's 128-byte-swizzle K-major layout. Warpgroups 2 and 3 consume:
// warpgroup 2+g owns output rows 64g..64g+63 of the tile and all 128
// columns, one wgmma.m64n128k16 accumulator (64 floats a thread), both
// operands read by the tensor cores through shared-memory descriptors,
// one product group in flight (wgmma.wait_group 1). Per stage two
// mbarriers instead of block barriers: full (each producer thread of the
// step arrives once its stores are fenced and once more when its copies
// land, cp.async.mbarrier.arrive) and empty (each consumer thread arrives
// once the stage's products are done). The conversion is off the
// products' path: round 5's kernel converted A in the consumers (from
// registers: ptxas C7513 serialized the products; from shared memory: one
// more barrier a step), 0.092 and 0.107 ms at 4096×4096×512; this one
// 0.045 (BENCHMARKS.md, issue #35 fifth and sixth rounds).
//
// Registers: launch_bounds(512, 1) gives each thread 128, under which
// ptxas spilled the producers' 64 loaded floats (88 bytes; 0.063 ms);
// setmaxnreg moves them: producers 152, consumers (64 accumulators) 104,
// the whole register file, no spill.
//
// Exactness: the weights enter exactly (f16); each activation is rounded
// once to f16 (as cuBLAS and llama.cpp's f16 GEMMs do: ~2^-12 of Σ|w·x|,
// the bound mat_mul_big_f16_h is held to), accumulated in f32.
#include "mma.h"

namespace wg {

using mma::h16, mma::smem;
constexpr int BM = 128, BN = 128, BK = 64, NS = 6, PRODUCERS = 256, THREADS = 512;
constexpr int TILE = 128 * BK * 2, STAGE = 2 * TILE; // the weights' tile, then the activations' (16 KB each)
// Smem is the dynamic shared memory a launch asks for: the ring, and
// 1 KB to align it to the 1024 bytes the 128-byte swizzle needs.
constexpr int Smem = NS * STAGE + 1024;

// sw is the byte offset of the 16-byte chunk c (0..7) of row r of a tile
// in the 128-byte-swizzle layout (8-row atoms of 1024 bytes, chunk c of
// row r at c ^ r%8).
__device__ inline int sw(int r, int c) { return r * 128 + ((c ^ (r & 7)) << 4); }

// desc is the wgmma descriptor of a K-major 128-byte-swizzled operand at
// shared address a: start address, leading offset 1 (unused by swizzled
// K-major layouts), stride 1024 bytes between 8-row atoms, swizzle mode 1
// (128 bytes). A k16 slice inside the atom is the same descriptor 32
// bytes on.
__device__ inline unsigned long desc(unsigned a) {
    return (unsigned long)((a & 0x3FFFF) >> 4) | 1ul << 16 | (unsigned long)(1024 >> 4) << 32 | 1ul << 62;
}

// mma64 is d += A·B (scale-d 1) for one m64n128k16 product of the
// warpgroup, A (m64 × k16) and B (k16 × n128) K-major in shared memory by
// descriptors a and b.
__device__ inline void mma64(float* d, unsigned long a, unsigned long b) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, 1, 1, 1, 0, 0;"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(a), "l"(b)
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

// The ring's mbarriers (shared addresses of 8-byte words).
__device__ inline void mbInit(unsigned b, unsigned count) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(b), "r"(count) : "memory"); }
__device__ inline void mbArrive(unsigned b) { asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(b) : "memory"); }
// mbCopies arrives on b once this thread's earlier cp.async copies have
// landed (noinc: the arrival is one of the count b was set up with).
__device__ inline void mbCopies(unsigned b) { asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(b) : "memory"); }
// mbWait returns once the phase of b with the given parity has completed.
__device__ inline void mbWait(unsigned b, unsigned parity) {
    unsigned done;
    do {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(b), "r"(parity)
                     : "memory");
    } while (!done);
}
// ldStream loads 16 read-only bytes without keeping them in L1 (each
// block reads its activations once; other blocks find them in L2).
__device__ inline float4 ldStream(const float* p) {
    float4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}
// setmaxnreg sets this warpgroup's registers a thread to N (Inc: raised,
// waiting for the registers others gave back; else lowered).
template <bool Inc, int N>
__device__ inline void setmaxnreg() {
    if (Inc) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N) : "memory");
    else asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N) : "memory");
}
// proxyFence orders this thread's shared-memory accesses (stores, and the
// copies it has seen land) with the tensor cores' reads (the async proxy).
__device__ inline void proxyFence() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

extern __shared__ __attribute__((aligned(1024))) unsigned char wg_smem[];

__device__ __attribute__((always_inline)) inline void mat_mul(const __hark::Params& P) {
    __shared__ __attribute__((aligned(16))) unsigned __hark_args[20];
    __shared__ __attribute__((aligned(8))) unsigned long long bars[2 * NS]; // full, then empty
    const mma::MatMul b = mma::matMul(P, __hark_args);
    const int n0 = (int)b.t.group[0] * BN, m0 = (int)b.t.group[1] * BM;
    const int tid = (int)b.t.linear;
    const int steps = (b.k + BK - 1) / BK;
    const unsigned s0 = smem(wg_smem), base = (s0 + 1023) & ~1023u;
    unsigned char* const ring = wg_smem + (base - s0);
    const unsigned full = smem(bars), empty = full + 8 * NS;
    if (tid == 0) {
        for (int i = 0; i < NS; i++) {
            mbInit(full + 8 * i, PRODUCERS); // a step's 128 producers, twice each
            mbInit(empty + 8 * i, THREADS - PRODUCERS);
        }
    }
    asm volatile("bar.sync 0;" ::: "memory");

    if (tid < PRODUCERS) {
        // Producer warpgroup p fills the stages of steps s ≡ p (mod 2), so
        // a step's activations are loaded two steps before they are
        // stored (with one step, the loads' latency set the pace: 0.073
        // ms, 4 or 6 stages alike). Weights: chunk pt + 128j (j < 8) of
        // the tile, row /8, 16-byte chunk %8. Activations: warp w's load j
        // reads rows r = 32w + 2j + lane/16, both 128-byte halves h =
        // lane/8 % 2, float4 q = lane%8 of the half (2 rows, 512
        // contiguous bytes a load), stored as 4 halves at chunk 4h + q/2
        // of the row: a row's two halves land in opposite halves of the
        // banks (the swizzle flips them every 4 rows), so a store takes
        // the least, 2 wavefronts. cp.async and float4 loads need 16-byte
        // aligned rows; else element loads (stored at once, fenced like
        // the activations).
        setmaxnreg<true, 152>();
        const int p = tid / 128, pt = tid % 128, w = pt / 32, l = pt % 32, h = l / 8 % 2, q = l % 8;
        const bool wvec = (((unsigned long)b.W | (unsigned long)b.k * 2) & 15) == 0;
        const bool xvec = (((unsigned long)b.x | (unsigned long)b.ldx * 4) & 15) == 0;
        // Inside the product (every row of the tile, a whole k step,
        // aligned rows: most blocks of a large product, every step but a
        // partial last one) a thread's loads are one base pointer and
        // fixed strides, no bounds (fewer issue slots and registers than
        // the checked loads: 0.063 ms against 0.070).
        const bool xin = xvec && m0 + BM <= b.m, win = wvec && n0 + BN <= b.n;
        const float* const xbase = b.x + (long)(xin ? m0 + 32 * w + l / 16 : 0) * b.ldx + 32 * h + 4 * q;
        const h16* const wbase = b.W + (long)(win ? n0 + pt / 8 : 0) * b.k + 8 * (pt % 8);
        const long xstride = 2l * b.ldx, wstride = 16l * b.k;
        float v[64];
        auto loadX = [&](int s) __attribute__((always_inline)) {
            if (xin && s * BK + BK <= b.k) {
                const float* src = xbase + s * BK;
#pragma unroll
                for (int j = 0; j < 16; j++) {
                    const float4 f = ldStream(src + j * xstride);
                    v[4 * j] = f.x, v[4 * j + 1] = f.y, v[4 * j + 2] = f.z, v[4 * j + 3] = f.w;
                }
                return;
            }
#pragma unroll
            for (int j = 0; j < 16; j++) {
                const int r = 32 * w + 2 * j + l / 16, e0 = s * BK + 32 * h + 4 * q;
                const bool ok = m0 + r < b.m && e0 < b.k;
                const float* src = b.x + (long)(ok ? m0 + r : 0) * b.ldx + (ok ? e0 : 0);
                if (xvec && ok && e0 + 4 <= b.k) {
                    const float4 f = ldStream(src);
                    v[4 * j] = f.x, v[4 * j + 1] = f.y, v[4 * j + 2] = f.z, v[4 * j + 3] = f.w;
                } else {
#pragma unroll
                    for (int i = 0; i < 4; i++) v[4 * j + i] = ok && e0 + i < b.k ? src[i] : 0.0f;
                }
            }
        };
        if (p < steps) loadX(p);
        for (int s = p; s < steps; s += 2) {
            const int st = s % NS;
            if (s >= NS) mbWait(empty + 8 * st, (s / NS - 1) & 1);
            unsigned char* const dw = ring + st * STAGE;
            if (win && s * BK + BK <= b.k) {
                // chunk pt + 128j: row pt/8 + 16j (the same row % 8), chunk pt % 8
                unsigned char* const d = dw + sw(pt / 8, pt % 8);
                const h16* src = wbase + s * BK;
#pragma unroll
                for (int j = 0; j < 8; j++) mma::cpAsync16(d + 2048 * j, src + j * wstride, 16u);
            } else {
#pragma unroll
                for (int j = 0; j < 8; j++) {
                    const int ci = pt + 128 * j, r = ci / 8, c = ci % 8, e0 = s * BK + 8 * c;
                    const bool ok = n0 + r < b.n && e0 < b.k;
                    const h16* src = b.W + (long)(ok ? n0 + r : 0) * b.k + (ok ? e0 : 0);
                    if (wvec) mma::cpAsync16(dw + sw(r, c), src, ok ? 16u : 0u); // k % 8 == 0: a chunk is whole or past k
                    else *(uint4*)(dw + sw(r, c)) = mma::chunk8(src, ok ? b.k - e0 : 0);
                }
            }
            mbCopies(full + 8 * st);
#pragma unroll
            for (int j = 0; j < 16; j++) {
                const int r = 32 * w + 2 * j + l / 16;
                *(uint2*)(dw + TILE + sw(r, 4 * h + q / 2) + 8 * (q % 2)) = uint2{mma::cvt2(v[4 * j], v[4 * j + 1]), mma::cvt2(v[4 * j + 2], v[4 * j + 3])};
            }
            proxyFence();
            mbArrive(full + 8 * st);
            if (s + 2 < steps) loadX(s + 2);
        }
        asm volatile("cp.async.wait_all;" ::: "memory");
        return;
    }

    setmaxnreg<false, 104>();
    const int ct = tid - PRODUCERS, cg = ct / 128, warp = (ct / 32) % 4, lane = ct % 32;
    float acc[64];
#pragma unroll
    for (int i = 0; i < 64; i++) acc[i] = 0.0f;
    for (int s = 0; s < steps; s++) {
        const int st = s % NS;
        mbWait(full + 8 * st, (s / NS) & 1);
        proxyFence(); // the producers' copies: they arrive without fencing
        const unsigned wb = base + st * STAGE, xb = wb + TILE + cg * 64 * 128;
        unsigned long ad[4], bd[4];
#pragma unroll
        for (int kk = 0; kk < 4; kk++) ad[kk] = pin(desc(xb + 32 * kk)), bd[kk] = pin(desc(wb + 32 * kk));
        wgFence();
#pragma unroll
        for (int kk = 0; kk < 4; kk++) mma64(acc, ad[kk], bd[kk]);
        wgCommit();
        wgWait<1>(acc);
        // step s-1's products are done: its stage goes back to the producers
        if (s > 0) mbArrive(empty + 8 * ((s - 1) % NS));
    }
    wgWait<0>(acc);

    // accumulator j (n8 slice j/4): acc[4j'], acc[4j'+1] row g, columns
    // 8j' + 2q, +1; acc[4j'+2], acc[4j'+3] row g+8
    const int g = lane / 4, q = lane % 4, ar = 64 * cg + 16 * warp + g;
#pragma unroll
    for (int j = 0; j < 16; j++)
#pragma unroll
        for (int h = 0; h < 2; h++) b.store(m0 + ar + 8 * h, n0 + 8 * j + 2 * q, acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
}

} // namespace wg

extern "C" __global__ void __attribute__((launch_bounds(wg::THREADS, 1))) hark_mat_mul_wgmma_f16(const __hark::Params P) { if (__hark::halted(P)) return; wg::mat_mul(P); }
