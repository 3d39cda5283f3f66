// mma.h: what the native tensor-core kernels share: the entry ABI
// (msl_cuda.h's __hark::Params, patch, ids), f16 conversions and the
// m16n8k16 product. Included by each native source; the module's unit
// includes them one after another, so it is included once.
#pragma once
#include "msl_cuda.h"
#pragma clang force_cuda_host_device end

namespace mma {

typedef unsigned short h16; // f16 bits

__device__ inline h16 f2h(float f) {
    h16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
__device__ inline float h2f(h16 h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

__device__ inline unsigned pack(h16 a, h16 b) { return (unsigned)a | (unsigned)b << 16; }

// mma16816 is D = A·B + C for one m16n8k16 product (A 16×16 row-major,
// B 16×8 column-major), f16 in, f32 accumulated. Fragments (g = lane/4,
// q = lane%4): A a[0] row g cols 2q,2q+1; a[1] row g+8; a[2] row g cols
// 2q+8,2q+9; a[3] row g+8 cols 2q+8,2q+9. B b0 rows (k) 2q,2q+1 of
// column g; b1 rows 2q+8,2q+9. C c0,c1 row g cols 2q,2q+1; c2,c3 row g+8.
__device__ inline void mma16816(float* c, const unsigned* a, unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// word is the f16 pair at (row, col) of a shared tile of row stride ld
// halves (col even).
__device__ inline unsigned word(const h16* s, int ld, int row, int col) { return *(const unsigned*)(s + row * ld + col); }

// cvt2 is pack(f2h(a), f2h(b)) in one instruction (sm_80).
__device__ inline unsigned cvt2(float a, float b) {
    unsigned r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(b), "f"(a));
    return r;
}

// split2 packs two floats' f16 parts: hi = f16(x), lo = f16(x - hi), so
// hi + lo carries 22 of float's 24 significant bits (|x| < 65504).
__device__ inline void split2(float a, float b, unsigned* hi, unsigned* lo) {
    const unsigned h = cvt2(a, b);
    *hi = h;
    *lo = cvt2(a - h2f((h16)h), b - h2f((h16)(h >> 16)));
}

// Integer weights to f16 without float conversions (the mma kernels'
// weight loads spent more issue slots converting than multiplying): a
// byte u under the f16 exponent byte 0x64 is the f16 1024 + u, exactly,
// and one f16x2 subtraction removes the offset. i8pair: the int8 pair in
// v's bytes 0 and 1 (flipped to u = b + 128 first; 0x6480 is 1152).
__device__ inline unsigned i8pair(unsigned v) {
    unsigned r;
    asm("prmt.b32 %0, %1, %2, 0x4140;" : "=r"(r) : "r"(v ^ 0x8080u), "r"(0x64646464u));
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(r), "r"(0x64806480u));
    return r;
}
// u4pair: the q4 pair n - 8 of the low nibbles of two bytes of w, chosen
// by the prmt selector sel (0x4140: bytes 0 and 1, 0x4342: bytes 2 and
// 3); 0x6408 is 1032.
template <unsigned sel>
__device__ inline unsigned u4pair(unsigned w) {
    unsigned r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(w), "r"(0u), "n"(sel));
    r = (r & 0x000F000Fu) | 0x64006400u;
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(r), "r"(0x64086408u));
    return r;
}

// smem is p's shared-window address (for cp.async, ldmatrix, wgmma).
__device__ inline unsigned smem(const void* p) {
    unsigned long a;
    asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
    return (unsigned)a;
}

// cpAsync16 copies bytes (0..16) of src to the 16-byte dst and zero-fills
// the rest, without waiting.
__device__ inline void cpAsync16(void* dst, const void* src, unsigned bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem(dst)), "l"(src), "r"(bytes) : "memory");
}
__device__ inline void cpCommit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ inline void cpWait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

// store2 writes out[row, col], out[row, col+1] (the second only when
// col+1 < n) with the bias and residual the mask binds.
__device__ inline void store2(float* out, const float* bias, const float* res, bool hb, bool hr, int ldo, int ldr, int row, int col, int n, float v0, float v1) {
    if (hb) {
        v0 += bias[col];
        if (col + 1 < n) v1 += bias[col + 1];
    }
    if (hr) {
        v0 += res[(long)row * ldr + col];
        if (col + 1 < n) v1 += res[(long)row * ldr + col + 1];
    }
    float* o = out + (long)row * ldo + col;
    if (col + 1 < n && ((unsigned long)o & 7) == 0) {
        *(float2*)o = float2{v0, v1};
    } else {
        o[0] = v0;
        if (col + 1 < n) o[1] = v1;
    }
}

// chunk8 is the 16-byte chunk of the 8 halves at src, those from avail on
// zero (none read): the weights' element loads where a row is not 16-byte
// aligned for cp.async.
__device__ inline uint4 chunk8(const h16* src, int avail) {
    unsigned v[4];
#pragma unroll
    for (int i = 0; i < 4; i++) v[i] = pack(2 * i < avail ? src[2 * i] : (h16)0, 2 * i + 1 < avail ? src[2 * i + 1] : (h16)0);
    return uint4{v[0], v[1], v[2], v[3]};
}

// MatMul is the large-tile mat_mul kernels' bindings and Args (0 W, 1 x,
// 2 out, 3 bias, 4 res; words 0 n, 1 k, 2 m, 3 ldx, 4 ldo, 5 ldr; 16 the
// binding mask) and the block's ids.
struct MatMul {
    int n, k, m, ldx, ldo, ldr;
    bool hb, hr; // bias, residual bound
    const h16* W;
    const float* x;
    float* out;
    const float* bias;
    const float* res;
    __hark::Ids t;

    // store writes out[row, col], out[row, col+1] with the bias and
    // residual, those inside the output.
    __device__ void store(int row, int col, float v0, float v1) const {
        if (row < m && col < n) store2(out, bias, res, hb, hr, ldo, ldr, row, col, n, v0, v1);
    }
};

// matMul reads the bindings (args: the kernel's 20 shared words for
// __hark::patch). always_inline: out of line, P went through a local copy.
__device__ __attribute__((always_inline)) inline MatMul matMul(const __hark::Params& P, unsigned* args) {
    void* bufs[16];
    __hark::patch(P, bufs, args);
    MatMul b;
    b.t = __hark::ids(P);
    b.n = (int)args[0], b.k = (int)args[1], b.m = (int)args[2], b.ldx = (int)args[3], b.ldo = (int)args[4], b.ldr = (int)args[5];
    b.hb = (args[16] >> 3) & 1u, b.hr = (args[16] >> 4) & 1u;
    b.W = (const h16*)bufs[0];
    b.x = (const float*)bufs[1];
    b.out = (float*)bufs[2];
    b.bias = (const float*)bufs[3];
    b.res = (const float*)bufs[4];
    return b;
}

} // namespace mma
