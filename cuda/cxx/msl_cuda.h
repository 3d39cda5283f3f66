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
// NVPTX has no libm and, without the CUDA toolkit, no libdevice. The
// executor's kernels call the host's libm, whose float functions are
// (nearly always) correctly rounded, and the CPU backend computes the
// same values in float64; so here each float function is evaluated in
// double (error below 2^-57, fdlibm's reductions and polynomials) and
// rounded once: correctly rounded except when the exact value lies within
// that error of a midpoint between two floats. (Single-precision
// polynomials of about 1 ulp were used before; GPU and CPU then disagreed
// in the last bit often enough to move near-tied decisions.) msl_core.h
// calls clang builtins; the macros below send the ones without an NVPTX
// lowering here. Builtins with an instruction (sqrt, fma, floor, fmin...)
// stay: they are the IEEE operations.
#pragma clang force_cuda_host_device begin
namespace __hark_math {
// x * 2^n for any n, in two steps so neither factor over- or underflows.
inline double scale2(double x, int n) {
    n = n < -2200 ? -2200 : n > 2200 ? 2200 : n;
    int a = n / 2, b = n - a;
    auto p2 = [](int k) {
        k = k < -1022 ? -1022 : k > 1023 ? 1023 : k;
        return __builtin_bit_cast(double, (unsigned long)(k + 1023) << 52);
    };
    return x * p2(a) * p2(b);
}
// exp(r) for |r| <= ln2/2: Taylor to r^13 (truncation below 2^-60).
inline double exp_red(double r) {
    double p = 1.0 / 6227020800.0;
    p = __builtin_fma(p, r, 1.0 / 479001600.0);
    p = __builtin_fma(p, r, 1.0 / 39916800.0);
    p = __builtin_fma(p, r, 1.0 / 3628800.0);
    p = __builtin_fma(p, r, 1.0 / 362880.0);
    p = __builtin_fma(p, r, 1.0 / 40320.0);
    p = __builtin_fma(p, r, 1.0 / 5040.0);
    p = __builtin_fma(p, r, 1.0 / 720.0);
    p = __builtin_fma(p, r, 1.0 / 120.0);
    p = __builtin_fma(p, r, 1.0 / 24.0);
    p = __builtin_fma(p, r, 1.0 / 6.0);
    p = __builtin_fma(p, r, 0.5);
    p = __builtin_fma(p, r, 1.0);
    return __builtin_fma(p, r, 1.0);
}
const double ln2hi = 6.93147180369123816490e-01, ln2lo = 1.90821492927058770002e-10; // fdlibm
inline double exp_d(double x) {
    if (__builtin_isnan(x)) return x;
    if (x > 709.8) return __builtin_inf();
    if (x < -745.2) return 0.0;
    double j = __builtin_rint(x * 1.44269504088896338700e+00);
    double r = __builtin_fma(-j, ln2hi, x); // exact: j·ln2hi has spare bits
    r = __builtin_fma(-j, ln2lo, r);
    return scale2(exp_red(r), (int)j);
}
inline double exp2_d(double x) {
    if (__builtin_isnan(x)) return x;
    if (x > 1024.5) return __builtin_inf();
    if (x < -1075.5) return 0.0;
    double j = __builtin_rint(x);
    return scale2(exp_red((x - j) * 6.93147180559945286227e-01), (int)j);
}
// log(x) for finite x > 0: x = m·2^e with m in [√½, √2), log m = 2·atanh(s),
// s = (m-1)/(m+1), |s| < 0.172, series to s^23.
inline double log_d(double x) {
    int e = 0;
    if (x < 2.2250738585072014e-308) { x *= 18014398509481984.0; e = -54; } // subnormal
    unsigned long u = __builtin_bit_cast(unsigned long, x);
    e += (int)(u >> 52) - 1023;
    double m = __builtin_bit_cast(double, (u & 0x000fffffffffffffUL) | 0x3ff0000000000000UL); // [1, 2)
    if (m > 1.41421356237309504880) { m *= 0.5; e += 1; }
    double f = m - 1.0, s = f / (2.0 + f), z = s * s;
    double p = 1.0 / 23;
    for (int k = 21; k >= 3; k -= 2) p = __builtin_fma(p, z, 1.0 / k);
    double ls = 2.0 * s * z * p;          // 2·atanh(s) − 2s
    double de = (double)e;                // log x = e·ln2 + f − (f − 2s) + ls, with f − 2s = s·f
    return __builtin_fma(de, ln2hi, f - (s * f - __builtin_fma(de, ln2lo, ls)));
}
// sin and cos of r, |r| <= π/4 (fdlibm's kernels).
inline double sin_red(double r) {
    double z = r * r;
    double p = 1.58969099521155010221e-10;
    p = __builtin_fma(p, z, -2.50507602534068634195e-08);
    p = __builtin_fma(p, z, 2.75573137070700676789e-06);
    p = __builtin_fma(p, z, -1.98412698298579493134e-04);
    p = __builtin_fma(p, z, 8.33333333332248946124e-03);
    p = __builtin_fma(p, z, -1.66666666666666324348e-01);
    return __builtin_fma(r * z, p, r);
}
inline double cos_red(double r) {
    double z = r * r;
    double p = -1.13596475577881948265e-11;
    p = __builtin_fma(p, z, 2.08757232129817482790e-09);
    p = __builtin_fma(p, z, -2.75573143513906633035e-07);
    p = __builtin_fma(p, z, 2.48015872894767294178e-05);
    p = __builtin_fma(p, z, -1.38888888888741095749e-03);
    p = __builtin_fma(p, z, 4.16666666666666019037e-02);
    return __builtin_fma(z * z, p, __builtin_fma(-0.5, z, 1.0));
}
// sincos of a float: x − j·π/2 with π/2 in three parts (fdlibm's pio2_1,
// pio2_2, pio2_2t), exact products for |j| < 2^20 (|x| < 1.6e6; beyond,
// the result degrades gracefully, as no kernel asks for such angles).
inline void sincos_d(float x, double& s, double& c) {
    double xd = (double)x;
    double j = __builtin_rint(xd * 6.36619772367581382433e-01);
    double r = __builtin_fma(-j, 1.57079632673412561417e+00, xd);
    r = __builtin_fma(-j, 6.07710050630396597660e-11, r);
    r = __builtin_fma(-j, 2.02226624879595063154e-21, r);
    double sr = sin_red(r), cr = cos_red(r);
    switch ((long)j & 3) {
    case 0: s = sr; c = cr; break;
    case 1: s = cr; c = -sr; break;
    case 2: s = -sr; c = -cr; break;
    default: s = -cr; c = sr; break;
    }
}
inline float expf(float x) { return (float)exp_d((double)x); }
inline float exp2f(float x) { return (float)exp2_d((double)x); }
inline float logf(float x) {
    if (__builtin_isnan(x) || x == __builtin_inff()) return x;
    if (x < 0.0f) return __builtin_nanf("");
    if (x == 0.0f) return -__builtin_inff();
    return (float)log_d((double)x);
}
inline float log2f(float x) { return x > 0.0f && __builtin_isfinite(x) ? (float)(log_d((double)x) * 1.44269504088896338700e+00) : logf(x); }
inline float log10f(float x) { return x > 0.0f && __builtin_isfinite(x) ? (float)(log_d((double)x) * 4.34294481903251816668e-01) : logf(x); }
inline float powf(float x, float y) {
    if (y == 0.0f || x == 1.0f) return 1.0f;
    if (__builtin_isnan(x) || __builtin_isnan(y)) return __builtin_nanf("");
    float ax = __builtin_fabsf(x);
    bool yint = __builtin_rintf(y) == y;
    if (x < 0.0f && !yint) return __builtin_nanf("");
    bool odd = yint && __builtin_fabsf(y - 2.0f * __builtin_truncf(y * 0.5f)) == 1.0f;
    float r;
    if (ax == 0.0f) r = y < 0.0f ? __builtin_inff() : 0.0f;
    else if (ax == __builtin_inff()) r = y < 0.0f ? 0.0f : __builtin_inff();
    else r = (float)exp_d((double)y * log_d((double)ax));
    return (x < 0.0f && odd) ? -r : r;
}
inline float sinf(float x) {
    if (!__builtin_isfinite(x)) return __builtin_nanf("");
    double s, c;
    sincos_d(x, s, c);
    return (float)s;
}
inline float cosf(float x) {
    if (!__builtin_isfinite(x)) return __builtin_nanf("");
    double s, c;
    sincos_d(x, s, c);
    return (float)c;
}
inline float tanf(float x) {
    if (!__builtin_isfinite(x)) return __builtin_nanf("");
    double s, c;
    sincos_d(x, s, c);
    return (float)(s / c);
}
// tanh, sinh, cosh from exp in double; below |x| = 2^-5 the odd series
// (to x^9) avoids the cancellation of e^x − 1.
inline float tanhf(float x) {
    double ax = __builtin_fabs((double)x);
    if (__builtin_isnan(x)) return x;
    if (ax > 10.0) return __builtin_copysignf(1.0f, x);
    double r;
    if (ax < 0.03125) {
        double z = ax * ax;
        r = ax * (1.0 + z * (-1.0 / 3 + z * (2.0 / 15 + z * (-17.0 / 315 + z * (62.0 / 2835)))));
    } else {
        double t = exp_d(2.0 * ax);
        r = (t - 1.0) / (t + 1.0);
    }
    return __builtin_copysignf((float)r, x);
}
inline float sinhf(float x) {
    double ax = __builtin_fabs((double)x), r;
    if (ax < 0.03125) {
        double z = ax * ax;
        r = ax * (1.0 + z * (1.0 / 6 + z * (1.0 / 120 + z * (1.0 / 5040 + z * (1.0 / 362880)))));
    } else {
        double e = exp_d(ax);
        r = 0.5 * (e - 1.0 / e);
    }
    return __builtin_copysignf((float)r, x);
}
inline float coshf(float x) {
    double e = exp_d(__builtin_fabs((double)x));
    return (float)(0.5 * (e + 1.0 / e));
}
inline float fmodf(float x, float y) {
    if (!__builtin_isfinite(x) || __builtin_isnan(y) || y == 0.0f) return __builtin_nanf("");
    if (!__builtin_isfinite(y)) return x;
    // exact for the magnitudes kernels use (|x/y| < 2^24): the quotient in
    // double, the remainder by one exact fma
    double q = __builtin_trunc((double)x / (double)y);
    return (float)__builtin_fma(-q, (double)y, (double)x);
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
// atomic_thread_fence at GPU scope (sample's ticket between threadgroups):
// fence.acq_rel is the lighter one, enough for a release or an acquire.
#define MSL_DEVICE_FENCE(seqcst)                                   \
    do {                                                           \
        if (seqcst)                                                \
            asm volatile("fence.sc.gpu;" ::: "memory");            \
        else                                                       \
            asm volatile("fence.acq_rel.gpu;" ::: "memory");       \
    } while (0)

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
//
// step and patch serve replay (a launch recorded once in a CUDA graph and
// replayed for every step): when step is not null, it points at the
// step's variables in device memory (plan.Vars: NumVars int64), and each
// of the npatch patches sets its field (an args word, target < 32, or a
// binding's offset from its buffer's base, 32 + binding) to
// base + mul*step[var] before the kernel runs, as plan.Dispatch.Resolved
// does on the host. The host checks every step's patched values before
// it replays.
//
// halt serves a chain's halt word (plan.ChainHalt): when halt is not null
// and the int32 it points at differs from running, the entry returns at
// once, before any barrier or shared memory (halted). The word is written
// by a kernel earlier on the same stream (the track's or the beam
// search's status), and a kernel's writes are visible to every later
// kernel of its stream, so a plain load sees it; the kernels that write
// it run one threadgroup and write it after every thread has read it.
// Launches outside such a chain pass null and load nothing.
struct Patch {
    long long base, mul;
    unsigned target, var;
};
struct Params {
    void* bufs[16];
    unsigned args[20];
    unsigned perm[2];
    const long long* step;
    const volatile int* halt;
    unsigned npatch;
    int running;
    Patch patch[4];
};
// halted says whether the chain this launch belongs to has stopped (its
// halt word differs from running): the entry then returns at once.
__attribute__((always_inline)) inline bool halted(const Params& P) {
    return P.halt != nullptr && *P.halt != P.running;
}
// patch writes P's bindings with its patches applied to bufs (16) and
// its Args to args (shared memory; the entry passes that to the kernel).
// Fields are read one by one with constant indices: a copy of the whole
// parameter would make clang copy it to local memory for every thread.
__attribute__((always_inline)) inline void patch(const Params& P, void** bufs, unsigned* args) {
    unsigned a[20];
#pragma unroll
    for (unsigned i = 0; i < 16; i++) bufs[i] = P.bufs[i];
#pragma unroll
    for (unsigned i = 0; i < 20; i++) a[i] = P.args[i];
#pragma unroll
    for (unsigned k = 0; k < 4; k++) {
        if (k < P.npatch) {
            const unsigned target = P.patch[k].target;
            const long long v = P.patch[k].base + P.patch[k].mul * P.step[P.patch[k].var];
#pragma unroll
            for (unsigned i = 0; i < 20; i++)
                if (target == i) a[i] = (unsigned)v;
            // a select and a store per binding, every one unconditional: as
            // "if (target == 32 + i) bufs[i] += v" clang merged the 16 stores
            // into one store through a computed address, which kept bufs in
            // local memory (a 136-byte stack frame written by every thread:
            // the element-wise kernels ran at L1 speed, not DRAM's)
#pragma unroll
            for (unsigned i = 0; i < 16; i++)
                bufs[i] = (char*)bufs[i] + (target == 32 + i ? v : 0);
        }
    }
    // thread 0 writes the 20 words: 20 shared stores, where spreading them
    // over the threads (i % threads == lin) cost 20 integer divisions on
    // every thread's path before the kernel started (issue #34)
    if (__nvvm_read_ptx_sreg_tid_x() == 0 && __nvvm_read_ptx_sreg_tid_y() == 0 && __nvvm_read_ptx_sreg_tid_z() == 0) {
#pragma unroll
        for (unsigned i = 0; i < 20; i++) args[i] = a[i];
    }
    asm volatile("bar.sync 0;" ::: "memory");
}
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
        t.group[0] = lin % gx;
        t.group[1] = (lin / gx) % gy;
        t.group[2] = lin / (gx * gy);
    } else { // the block's own position: no divisions on the unpermuted path
        t.group[0] = __nvvm_read_ptx_sreg_ctaid_x();
        t.group[1] = __nvvm_read_ptx_sreg_ctaid_y();
        t.group[2] = __nvvm_read_ptx_sreg_ctaid_z();
    }
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
// The emulation is msl_simdgroup.h's; a lane keeps only its two elements
// (sg_extra is empty) and reads a warp-mate's element of a product's
// operands by a shuffle (all 32 lanes take part, as Metal requires).
template <class T> struct sg_extra {
    void diag(T) {}
    void fill(T) {}
    template <class U> void loaded(const U*, ulong, bool) {}
    void changed() {}
};
template <class T, int R, int C> struct simdgroup_matrix;
template <class TA, class TB> struct sg_peers {
    float a0, a1, b0, b1;
    sg_peers(const simdgroup_matrix<TA, 8, 8>& a, const simdgroup_matrix<TB, 8, 8>& b)
        : a0((float)a.e.x), a1((float)a.e.y), b0((float)b.e.x), b1((float)b.e.y) {}
    float a(unsigned j, unsigned s) const { return __hark::shfl(j ? a1 : a0, s, 0xffffffffu); }
    float b(unsigned j, unsigned s) const { return __hark::shfl(j ? b1 : b0, s, 0xffffffffu); }
};
#define MSL_SG_LANE() __hark::lane()
#define MSL_SG_INLINE
#define MSL_SG_SITE_PARAM
#define MSL_SG_SITE_ARG
#include "msl_simdgroup.h"
} // namespace metal

// fast::exp is the hardware's ex2.approx (about 2 ulp, plus the rounding of
// x·log2 e; subnormal results flush to 0), where metal::exp is evaluated in
// double (above): for decode kernels whose tolerances allow it, such as the
// gated mat-vecs' SiLU, which takes one exp per gate element in every
// SIMD-group (issue #34). Qualified lookup finds it before msl_core.h's
// `using namespace metal` in metal::fast.
namespace metal {
namespace fast {
inline float exp(float x) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x * 1.4426950408889634f));
    return r;
}

// fast::sin and fast::cos are the hardware's sin.approx and cos.approx
// (absolute error below 2^-20.5 for |x| <= 100π), where metal::sin and
// metal::cos take fdlibm's reduction and polynomials in double: for
// RopeAttention's prologue, whose angles are already reduced to [-π, π]
// (rope_angle_cs) and whose K is rounded to f16 (issue #33).
inline float sin(float x) {
    float r;
    asm("sin.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
inline float cos(float x) {
    float r;
    asm("cos.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
} // namespace fast
} // namespace metal

// dot4_i8 (the 8-bit-activation mat-vecs, shaders/matvec_q8.metal, issue
// #34) is c plus the dot product of a's and b's four signed bytes: one
// dp4a (sm_61 and newer). MSL_DOT4_I8 tells the shader source, whose
// portable version the executor and Metal compile, that it is defined.
#define MSL_DOT4_I8 1
inline int dot4_i8(uint a, uint b, int c) {
    int r;
    asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}

// pdl_wait and pdl_launch_dependents (issue #34, round 18): where a kernel
// calls them, cuda/ptxpdl puts griddepcontrol.wait and
// griddepcontrol.launch_dependents (sm_90 and newer, the PDL form of the
// PTX) in place of these marker comments; an entry that has the wait's
// marker gets no wait at its first instruction, so what it does before the
// call (loads of weights no kernel writes) overlaps the grid before it.
// In the plain PTX (older GPUs, HARK_CUDA_PDL=0) they are comments: the
// launches are serialized then. Such an entry reads its halt word and
// step variables before its wait: sound only where the grid before it let
// it start after its own wait (quantize_q8x's pdl_launch_dependents comes
// after its entry's wait, and the launch rule puts it right before
// mat_vec_q8p), so every grid before that one has finished. MSL_PDL tells the shader source, whose
// empty versions the executor and Metal compile, that they are defined.
#define MSL_PDL 1
inline void pdl_wait() { asm volatile("// hark:pdl-wait" ::: "memory"); }
inline void pdl_launch_dependents() { asm volatile("// hark:pdl-launch" ::: "memory"); }
