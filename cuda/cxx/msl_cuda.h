// msl_cuda.h: Hark's Metal kernels as CUDA device code (clang, no CUDA
// toolkit: -nocudainc -nocudalib). A threadgroup is a block, a SIMD-group a
// warp (both 32 wide, lanes in linear thread order), SIMD-group functions
// are warp shuffles and votes, threadgroup memory is shared memory,
// simdgroup matrices are 8x8 fragments spread over the warp's lanes (two
// elements a lane, Metal's layout) multiplied through shuffles. Types,
// vectors and math come from the executor's msl_core.h; what NVPTX lacks
// (libm) is defined here. The generated unit (cuda/gen) includes this file,
// then the translated .metal sources, then the entry points.
#pragma once

// (the __x__ spellings: msl_core.h defines device and constant as macros)
#define __global__ __attribute__((__global__))
#define __device__ __attribute__((__device__))
#define __host__ __attribute__((__host__))
#define __shared__ __attribute__((__shared__))
#define __constant__ __attribute__((__constant__))

// ---- math NVPTX has no instruction for ------------------------------------
// Single-precision versions of the usual Cephes reductions (about 1-2 ulp),
// in place of libdevice, which needs the CUDA toolkit. msl_core.h calls
// clang builtins; the macros below send the ones without an NVPTX lowering
// here. Builtins with an instruction (sqrt, fma, floor, fmin...) stay.
#pragma clang force_cuda_host_device begin
namespace __hark_math {
inline float ldexp2(float x, int n) {
    // x * 2^n for n in [-300, 300], in two steps so neither factor overflows
    int a = n / 2, b = n - a;
    float fa = __builtin_bit_cast(float, (unsigned)((a + 127) < 1 ? 0 : (a + 127) > 254 ? 254 : (a + 127)) << 23);
    float fb = __builtin_bit_cast(float, (unsigned)((b + 127) < 1 ? 0 : (b + 127) > 254 ? 254 : (b + 127)) << 23);
    return x * fa * fb;
}
// exp(r) for |r| <= ln2/2 (Cephes expf polynomial).
inline float expr(float r) {
    float p = 1.9875691500e-4f;
    p = __builtin_fmaf(p, r, 1.3981999507e-3f);
    p = __builtin_fmaf(p, r, 8.3334519073e-3f);
    p = __builtin_fmaf(p, r, 4.1665795894e-2f);
    p = __builtin_fmaf(p, r, 1.6666665459e-1f);
    p = __builtin_fmaf(p, r, 5.0000001201e-1f);
    return __builtin_fmaf(p, r * r, r) + 1.0f;
}
inline float expf(float x) {
    if (__builtin_isnan(x)) return x;
    if (x > 88.72284f) return __builtin_inff();
    if (x < -103.97208f) return 0.0f;
    float j = __builtin_rintf(x * 1.44269504088896341f);
    float r = __builtin_fmaf(j, -0.693359375f, x);
    r = __builtin_fmaf(j, 2.12194440e-4f, r);
    return ldexp2(expr(r), (int)j);
}
inline float exp2f(float x) {
    if (__builtin_isnan(x)) return x;
    if (x >= 128.0f) return __builtin_inff();
    if (x < -150.0f) return 0.0f;
    float j = __builtin_rintf(x);
    return ldexp2(expr((x - j) * 0.693147180559945309f), (int)j);
}
inline float logf(float x) {
    if (__builtin_isnan(x) || x == __builtin_inff()) return x;
    if (x < 0.0f) return __builtin_nanf("");
    if (x == 0.0f) return -__builtin_inff();
    int e = 0;
    if (x < 1.17549435e-38f) { x *= 16777216.0f; e = -24; } // subnormal
    unsigned u = __builtin_bit_cast(unsigned, x);
    e += (int)(u >> 23) - 126;
    float m = __builtin_bit_cast(float, (u & 0x007fffffu) | 0x3f000000u); // [0.5, 1)
    if (m < 0.707106781186547524f) { e -= 1; m = m + m - 1.0f; } else { m = m - 1.0f; }
    float z = m * m;
    float y = 7.0376836292e-2f;
    y = __builtin_fmaf(y, m, -1.1514610310e-1f);
    y = __builtin_fmaf(y, m, 1.1676998740e-1f);
    y = __builtin_fmaf(y, m, -1.2420140846e-1f);
    y = __builtin_fmaf(y, m, 1.4249322787e-1f);
    y = __builtin_fmaf(y, m, -1.6668057665e-1f);
    y = __builtin_fmaf(y, m, 2.0000714765e-1f);
    y = __builtin_fmaf(y, m, -2.4999993993e-1f);
    y = __builtin_fmaf(y, m, 3.3333331174e-1f);
    y = y * m * z;
    float fe = (float)e;
    y = __builtin_fmaf(fe, -2.12194440e-4f, y);
    y = __builtin_fmaf(-0.5f, z, y);
    return __builtin_fmaf(fe, 0.693359375f, m + y);
}
inline float log2f(float x) { return logf(x) * 1.44269504088896341f; }
inline float log10f(float x) { return logf(x) * 0.434294481903251828f; }
inline float powf(float x, float y) {
    if (y == 0.0f || x == 1.0f) return 1.0f;
    if (__builtin_isnan(x) || __builtin_isnan(y)) return __builtin_nanf("");
    float ax = __builtin_fabsf(x);
    bool yint = __builtin_rintf(y) == y;
    if (x < 0.0f && !yint) return __builtin_nanf("");
    float r = expf(y * logf(ax));
    bool odd = yint && __builtin_fabsf(y - 2.0f * __builtin_truncf(y * 0.5f)) == 1.0f;
    return (x < 0.0f && odd) ? -r : r;
}
// sin and cos of x: the reduction by pi/2 in double (exact enough for any
// RoPE angle), the Cephes polynomials on |r| <= pi/4.
inline void sincos_red(float x, float& s, float& c) {
    double xd = (double)x;
    double j = __builtin_rint(xd * 0.636619772367581343);
    float r = (float)(xd - j * 1.57079632679489661923);
    float z = r * r;
    float sp = -1.9515295891e-4f;
    sp = __builtin_fmaf(sp, z, 8.3321608736e-3f);
    sp = __builtin_fmaf(sp, z, -1.6666654611e-1f);
    float sr = __builtin_fmaf(sp * z, r, r);
    float cp = 2.443315711809948e-5f;
    cp = __builtin_fmaf(cp, z, -1.388731625493765e-3f);
    cp = __builtin_fmaf(cp, z, 4.166664568298827e-2f);
    float cr = __builtin_fmaf(cp * z, z, __builtin_fmaf(-0.5f, z, 1.0f));
    long q = (long)j & 3;
    switch (q) {
    case 0: s = sr; c = cr; break;
    case 1: s = cr; c = -sr; break;
    case 2: s = -sr; c = -cr; break;
    default: s = -cr; c = sr; break;
    }
}
inline float sinf(float x) {
    if (!__builtin_isfinite(x)) return __builtin_nanf("");
    float s, c;
    sincos_red(x, s, c);
    return s;
}
inline float cosf(float x) {
    if (!__builtin_isfinite(x)) return __builtin_nanf("");
    float s, c;
    sincos_red(x, s, c);
    return c;
}
inline float tanf(float x) {
    if (!__builtin_isfinite(x)) return __builtin_nanf("");
    float s, c;
    sincos_red(x, s, c);
    return s / c;
}
inline float tanhf(float x) {
    float ax = __builtin_fabsf(x);
    if (__builtin_isnan(x)) return x;
    if (ax < 0.625f) { // Cephes tanhf polynomial
        float z = x * x;
        float p = -5.70498872745e-3f;
        p = __builtin_fmaf(p, z, 2.06390887954e-2f);
        p = __builtin_fmaf(p, z, -5.37397155531e-2f);
        p = __builtin_fmaf(p, z, 1.33314422036e-1f);
        p = __builtin_fmaf(p, z, -3.33332819422e-1f);
        return __builtin_fmaf(p * z, x, x);
    }
    if (ax > 9.01f) return __builtin_copysignf(1.0f, x);
    float r = 1.0f - 2.0f / (expf(2.0f * ax) + 1.0f);
    return __builtin_copysignf(r, x);
}
inline float sinhf(float x) {
    float e = expf(__builtin_fabsf(x));
    return __builtin_copysignf(0.5f * (e - 1.0f / e), x);
}
inline float coshf(float x) {
    float e = expf(__builtin_fabsf(x));
    return 0.5f * (e + 1.0f / e);
}
inline float fmodf(float x, float y) {
    if (!__builtin_isfinite(x) || __builtin_isnan(y) || y == 0.0f) return __builtin_nanf("");
    if (!__builtin_isfinite(y)) return x;
    // exact for the magnitudes kernels use (|x/y| < 2^24)
    float q = __builtin_truncf(x / y);
    return __builtin_fmaf(-q, y, x);
}
} // namespace __hark_math
#pragma clang force_cuda_host_device end
#define __builtin_expf __hark_math::expf
#define __builtin_exp2f __hark_math::exp2f
#define __builtin_logf __hark_math::logf
#define __builtin_log2f __hark_math::log2f
#define __builtin_log10f __hark_math::log10f
#define __builtin_powf __hark_math::powf
#define __builtin_sinf __hark_math::sinf
#define __builtin_cosf __hark_math::cosf
#define __builtin_tanf __hark_math::tanf
#define __builtin_tanhf __hark_math::tanhf
#define __builtin_sinhf __hark_math::sinhf
#define __builtin_coshf __hark_math::coshf
#define __builtin_fmodf __hark_math::fmodf

// Relaxed loads and stores of atomics (see msl_core.h).
#define MSL_ATOMIC_LOAD(p) (*(volatile __typeof__(*(p))*)(p))
#define MSL_ATOMIC_STORE(p, v) (void)(*(volatile __typeof__(*(p))*)(p) = (v))

// Everything from here to the entry points is host+device, so the
// translated sources' plain functions are device code.
#pragma clang force_cuda_host_device begin
#include "msl_core.h"

namespace __hark {
// Params is the one kernel parameter of every entry point: the bindings
// (device pointers; [[buffer(8)]] is replaced by the Args copy below),
// the Args block, and the block-order permutation: when perm[0] is not
// zero, block b of n runs as logical threadgroup (perm[0]*b + perm[1]) % n
// (perm[0] coprime with n), so kernels that depend on the order blocks
// run in show up.
struct Params {
    void* bufs[16];
    unsigned args[20];
    unsigned perm[2];
};
struct Ids {
    unsigned tid[3], group[3], tpg[3], ngroups[3], gid[3];
    unsigned linear, lane, simd, nsimd;
};
inline Ids ids(const Params& P) {
    Ids t;
    t.tid[0] = __nvvm_read_ptx_sreg_tid_x();
    t.tid[1] = __nvvm_read_ptx_sreg_tid_y();
    t.tid[2] = __nvvm_read_ptx_sreg_tid_z();
    t.tpg[0] = __nvvm_read_ptx_sreg_ntid_x();
    t.tpg[1] = __nvvm_read_ptx_sreg_ntid_y();
    t.tpg[2] = __nvvm_read_ptx_sreg_ntid_z();
    t.ngroups[0] = __nvvm_read_ptx_sreg_nctaid_x();
    t.ngroups[1] = __nvvm_read_ptx_sreg_nctaid_y();
    t.ngroups[2] = __nvvm_read_ptx_sreg_nctaid_z();
    unsigned gx = t.ngroups[0], gy = t.ngroups[1];
    unsigned lin = __nvvm_read_ptx_sreg_ctaid_x() + gx * (__nvvm_read_ptx_sreg_ctaid_y() + gy * __nvvm_read_ptx_sreg_ctaid_z());
    if (P.perm[0] != 0) {
        unsigned long n = (unsigned long)gx * gy * t.ngroups[2];
        lin = (unsigned)(((unsigned long)P.perm[0] * lin + P.perm[1]) % n);
    }
    t.group[0] = lin % gx;
    t.group[1] = (lin / gx) % gy;
    t.group[2] = lin / (gx * gy);
    for (int i = 0; i < 3; i++) t.gid[i] = t.group[i] * t.tpg[i] + t.tid[i];
    t.linear = t.tid[0] + t.tpg[0] * (t.tid[1] + t.tpg[1] * t.tid[2]);
    t.lane = t.linear % 32;
    t.simd = t.linear / 32;
    t.nsimd = (t.tpg[0] * t.tpg[1] * t.tpg[2] + 31) / 32;
    return t;
}
inline unsigned lane() { return __nvvm_read_ptx_sreg_laneid(); }
inline unsigned active() {
    unsigned m;
    asm volatile("activemask.b32 %0;" : "=r"(m));
    return m;
}

// shfl moves any value type through 32-bit shuffles.
template <class T> inline T shfl(T v, unsigned src, unsigned mask) {
    static_assert(sizeof(T) % 2 == 0 || sizeof(T) == 1, "shuffle of an odd-sized type");
    if constexpr (sizeof(T) == 4) {
        return __builtin_bit_cast(T, __nvvm_shfl_sync_idx_i32(mask, __builtin_bit_cast(int, v), (int)src, 0x1f));
    } else if constexpr (sizeof(T) == 2) {
        unsigned short s = __builtin_bit_cast(unsigned short, v);
        return __builtin_bit_cast(T, (unsigned short)__nvvm_shfl_sync_idx_i32(mask, (int)s, (int)src, 0x1f));
    } else if constexpr (sizeof(T) == 1) {
        unsigned char s = __builtin_bit_cast(unsigned char, v);
        return __builtin_bit_cast(T, (unsigned char)__nvvm_shfl_sync_idx_i32(mask, (int)s, (int)src, 0x1f));
    } else {
        struct W { int w[(sizeof(T) + 3) / 4]; };
        W in{}, out{};
        __builtin_memcpy(&in, &v, sizeof(T));
        for (unsigned i = 0; i < sizeof(W) / 4; i++) out.w[i] = __nvvm_shfl_sync_idx_i32(mask, in.w[i], (int)src, 0x1f);
        T r;
        __builtin_memcpy(&r, &out, sizeof(T));
        return r;
    }
}
// reduce combines v over the active lanes: a butterfly when the warp is
// whole (every lane gets the same bits, the operations being commutative),
// else lane by lane in index order.
template <class T, class F> inline T reduce(T v, F f) {
    unsigned m = active();
#ifndef HARK_SIMD_LANE_ORDER // (a test variant: always in lane order, as the executor)
    if (m == 0xffffffffu) {
        for (unsigned o = 16; o > 0; o >>= 1) v = f(v, shfl(v, lane() ^ o, m));
        return v;
    }
#endif
    T acc = v;
    bool first = true;
    for (unsigned i = 0; i < 32; i++)
        if (m >> i & 1) {
            T x = shfl(v, i, m);
            acc = first ? x : f(acc, x);
            first = false;
        }
    return acc;
}
template <class T, class F> inline T scan(T v, T init, F f, bool inclusive) {
    unsigned m = active(), me = lane();
    T acc = init, mine = init;
    for (unsigned i = 0; i < 32; i++)
        if (m >> i & 1) {
            T x = shfl(v, i, m);
            T next = f(acc, x);
            if (i == me) mine = inclusive ? next : acc;
            acc = next;
        }
    return mine;
}
} // namespace __hark

namespace metal {
// Barriers are inline assembly with a memory clobber: clang 14 let a
// shared-memory load move above __syncthreads() (sample's tie path read
// ws.tieUse before thread 0's store was ordered by the barrier, found on
// the H100), so the compiler must treat a barrier as touching all memory.
// bar.sync itself orders shared and global memory within the block.
inline void threadgroup_barrier(mem_flags) { asm volatile("bar.sync 0;" ::: "memory"); }
inline void simdgroup_barrier(mem_flags) { asm volatile("bar.warp.sync %0;" ::"r"(__hark::active()) : "memory"); }

#define HARK_REDUCE(name, expr)                                                     \
    template <class T> inline T name(T v) {                                         \
        return __hark::reduce(v, [](T a, T b) -> T { return expr; });               \
    }
HARK_REDUCE(simd_sum, a + b)
HARK_REDUCE(simd_product, a * b)
HARK_REDUCE(simd_max, max(a, b))
HARK_REDUCE(simd_min, min(a, b))
HARK_REDUCE(simd_and, a & b)
HARK_REDUCE(simd_or, a | b)
HARK_REDUCE(simd_xor, a ^ b)
#undef HARK_REDUCE
template <class T> inline T simd_prefix_exclusive_sum(T v) { return __hark::scan(v, (T)0, [](T a, T b) -> T { return a + b; }, false); }
template <class T> inline T simd_prefix_inclusive_sum(T v) { return __hark::scan(v, (T)0, [](T a, T b) -> T { return a + b; }, true); }
template <class T> inline T simd_prefix_exclusive_product(T v) { return __hark::scan(v, (T)1, [](T a, T b) -> T { return a * b; }, false); }
template <class T> inline T simd_prefix_inclusive_product(T v) { return __hark::scan(v, (T)1, [](T a, T b) -> T { return a * b; }, true); }

// Sources out of range or inactive leave the lane's own value, as the
// executor does (undefined on Metal).
template <class T> inline T shuffle_from(T v, long s) {
    unsigned m = __hark::active();
    T r = __hark::shfl(v, (unsigned)(s & 31), m);
    return (s >= 0 && s < 32 && (m >> s & 1)) ? r : v;
}
template <class T> inline T simd_shuffle(T v, ushort l) { return shuffle_from(v, (long)l); }
template <class T> inline T simd_broadcast(T v, ushort l) { return shuffle_from(v, (long)l); }
template <class T> inline T simd_shuffle_down(T v, ushort d) { return shuffle_from(v, (long)__hark::lane() + d); }
template <class T> inline T simd_shuffle_up(T v, ushort d) { return shuffle_from(v, (long)__hark::lane() - d); }
template <class T> inline T simd_shuffle_xor(T v, ushort d) { return shuffle_from(v, (long)(__hark::lane() ^ d)); }
template <class T> inline T simd_shuffle_rotate_down(T v, ushort d) { return shuffle_from(v, (long)((__hark::lane() + d) & 31)); }
template <class T> inline T simd_shuffle_rotate_up(T v, ushort d) { return shuffle_from(v, (long)((__hark::lane() - d) & 31)); }
template <class T> inline T simd_broadcast_first(T v) {
    unsigned m = __hark::active();
    return __hark::shfl(v, (unsigned)__builtin_ctz(m), m);
}

struct simd_vote {
    typedef ulong vote_t;
    vote_t v;
    explicit operator vote_t() const { return v; }
    bool all() const { return v == 0xffffffffu; }
    bool any() const { return v != 0; }
};
inline simd_vote simd_ballot(bool b) { return simd_vote{(ulong)(unsigned)__nvvm_vote_ballot_sync(__hark::active(), b)}; }
inline bool simd_any(bool b) { return __nvvm_vote_any_sync(__hark::active(), b); }
inline bool simd_all(bool b) { return __nvvm_vote_all_sync(__hark::active(), b); }
inline bool simd_is_first() { return __hark::lane() == (unsigned)__builtin_ctz(__hark::active()); }
inline simd_vote simd_active_threads_mask() { return simd_vote{(ulong)__hark::active()}; }

// ---- simdgroup matrices -----------------------------------------------------
// Lane l holds row l/4, columns 2(l%4) and 2(l%4)+1 (Metal's layout). A
// product gathers the row of A and the two columns of B it needs by
// shuffles (all 32 lanes take part, as Metal requires); the products of
// one element are summed in k order, as the executor does.
template <class T, int R, int C> struct simdgroup_matrix {
    static_assert(R == 8 && C == 8, "only 8x8 simdgroup matrices are supported");
    typedef T elem_t;
    typedef T e2 __attribute__((ext_vector_type(2)));
    e2 e;
    simdgroup_matrix() = default;
    explicit simdgroup_matrix(T diag) {
        unsigned l = __hark::lane(), r = l / 4, c = 2 * (l % 4);
        e.x = r == c ? diag : (T)0;
        e.y = r == c + 1 ? diag : (T)0;
    }
    thread e2& thread_elements() { return e; }
    const thread e2& thread_elements() const { return e; }
};
typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;

template <class T, int R, int C> inline simdgroup_matrix<T, R, C> make_filled_simdgroup_matrix(T v) {
    simdgroup_matrix<T, R, C> m;
    m.e.x = v;
    m.e.y = v;
    return m;
}
template <class T, class U>
inline void simdgroup_load(thread simdgroup_matrix<T, 8, 8>& d, const U* src, ulong elements_per_row = 8,
                           ulong2 matrix_origin = 0, bool transpose_matrix = false) {
    unsigned l = __hark::lane();
    ulong r = l / 4, c = 2 * (l % 4);
    const U* p = src + matrix_origin.y * elements_per_row + matrix_origin.x;
    if (!transpose_matrix) {
        d.e.x = (T)p[r * elements_per_row + c];
        d.e.y = (T)p[r * elements_per_row + c + 1];
    } else {
        d.e.x = (T)p[c * elements_per_row + r];
        d.e.y = (T)p[(c + 1) * elements_per_row + r];
    }
}
template <class T, class U>
inline void simdgroup_store(const thread simdgroup_matrix<T, 8, 8>& s, U* dst, ulong elements_per_row = 8,
                            ulong2 matrix_origin = 0, bool transpose_matrix = false) {
    unsigned l = __hark::lane();
    ulong r = l / 4, c = 2 * (l % 4);
    U* p = dst + matrix_origin.y * elements_per_row + matrix_origin.x;
    for (int j = 0; j < 2; j++) {
        ulong row = r, col = c + j;
        if (transpose_matrix) { ulong t = row; row = col; col = t; }
        p[row * elements_per_row + col] = (U)(j == 0 ? s.e.x : s.e.y);
    }
}
template <class TD, class TA, class TB, class TC>
inline void simdgroup_multiply_accumulate(thread simdgroup_matrix<TD, 8, 8>& d, const thread simdgroup_matrix<TA, 8, 8>& a,
                                          const thread simdgroup_matrix<TB, 8, 8>& b, const thread simdgroup_matrix<TC, 8, 8>& c) {
    const unsigned full = 0xffffffffu;
    unsigned l = __hark::lane(), r = l / 4, q = l % 4;
    float a0 = (float)a.e.x, a1 = (float)a.e.y, b0 = (float)b.e.x, b1 = (float)b.e.y;
    float acc0 = (float)c.e.x, acc1 = (float)c.e.y;
    for (unsigned k = 0; k < 8; k++) {
        float ark = __hark::shfl((k & 1) ? a1 : a0, r * 4 + k / 2, full);
        float bk0 = __hark::shfl(b0, k * 4 + q, full);
        float bk1 = __hark::shfl(b1, k * 4 + q, full);
        acc0 += ark * bk0;
        acc1 += ark * bk1;
    }
    d.e.x = (TD)acc0;
    d.e.y = (TD)acc1;
}
template <class TD, class TA, class TB>
inline void simdgroup_multiply(thread simdgroup_matrix<TD, 8, 8>& d, const thread simdgroup_matrix<TA, 8, 8>& a,
                               const thread simdgroup_matrix<TB, 8, 8>& b) {
    simdgroup_matrix<TD, 8, 8> z = make_filled_simdgroup_matrix<TD, 8, 8>((TD)0);
    simdgroup_multiply_accumulate(d, a, b, z);
}
} // namespace metal
