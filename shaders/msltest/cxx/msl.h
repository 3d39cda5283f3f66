// msl.h: the Metal Shading Language subset Hark's kernels use, as clang C++
// (see ../README.md for what is covered and where it differs from Metal).
// It is included before the generated translation unit that holds every
// .metal file; it includes no system header, so the only overloads a kernel
// sees are metal's.
#pragma once
#include "abi.h"
#include "msl_core.h"

namespace __msl {
// Runtime entry points (runtime.cpp).
typedef void (*CollFn)(void** ops, unsigned mask);
extern "C" void msl_collective(void* op, CollFn fn, unsigned site);
extern "C" void msl_barrier();
extern "C" void* msl_tg_alloc(unsigned long size, unsigned long align);
inline unsigned msl_lane() { return __msl_abi::cur.lane; }
inline int msl_simd_complete() { return __msl_abi::cur.simd_complete; } // the SIMD-group has 32 lanes
extern "C" void msl_fail(const char* msg);
} // namespace __msl


#define MSL_SITE unsigned __site = __msl::site(__builtin_LINE(), __builtin_COLUMN())

namespace metal {
inline void threadgroup_barrier(mem_flags) { __msl::msl_barrier(); }

// ---- SIMD-group functions ----------------------------------------------------
// Each is a collective: the lanes of the SIMD-group that have not returned
// (and are not waiting elsewhere) meet, and the last to arrive computes the
// result for all (runtime.cpp). Lanes are visited in index order.
namespace __coll {
template <class T> struct Op1 { T in, out; };
template <class T> struct OpI { T in, out; uint arg; };
template <class T, class F> inline void reduce(void** ops, unsigned mask, F f) {
    T acc;
    bool first = true;
    for (int i = 0; i < 32; i++)
        if (mask >> i & 1) {
            T v = ((Op1<T>*)ops[i])->in;
            acc = first ? v : f(acc, v);
            first = false;
        }
    for (int i = 0; i < 32; i++)
        if (mask >> i & 1) ((Op1<T>*)ops[i])->out = acc;
}
} // namespace __coll

#define MSL_REDUCE(name, expr)                                                              \
    template <class T> inline T name(T v, MSL_SITE) {                                        \
        __coll::Op1<T> op{v, v};                                                            \
        __msl::msl_collective(&op, [](void** ops, unsigned mask) {                          \
            __coll::reduce<T>(ops, mask, [](T a, T b) -> T { return expr; });               \
        }, __site);                                                                         \
        return op.out;                                                                      \
    }
MSL_REDUCE(simd_sum, a + b)
MSL_REDUCE(simd_product, a * b)
MSL_REDUCE(simd_max, max(a, b))
MSL_REDUCE(simd_min, min(a, b))
MSL_REDUCE(simd_and, a & b)
MSL_REDUCE(simd_or, a | b)
MSL_REDUCE(simd_xor, a ^ b)
#undef MSL_REDUCE

#define MSL_PREFIX(name, init, expr, inclusive)                                             \
    template <class T> inline T name(T v, MSL_SITE) {                                        \
        __coll::Op1<T> op{v, v};                                                            \
        __msl::msl_collective(&op, [](void** ops, unsigned mask) {                          \
            T acc = (T)(init);                                                              \
            for (int i = 0; i < 32; i++)                                                    \
                if (mask >> i & 1) {                                                        \
                    auto* o = (__coll::Op1<T>*)ops[i];                                       \
                    T a = acc, b = o->in;                                                   \
                    T next = expr;                                                          \
                    o->out = inclusive ? next : acc;                                        \
                    acc = next;                                                             \
                }                                                                           \
        }, __site);                                                                         \
        return op.out;                                                                      \
    }
MSL_PREFIX(simd_prefix_exclusive_sum, 0, a + b, false)
MSL_PREFIX(simd_prefix_inclusive_sum, 0, a + b, true)
MSL_PREFIX(simd_prefix_exclusive_product, 1, a * b, false)
MSL_PREFIX(simd_prefix_inclusive_product, 1, a * b, true)
#undef MSL_PREFIX

// src(lane, arg) picks the source lane; out of range or inactive sources
// leave the lane's own value (Metal: undefined for inactive sources).
#define MSL_SHUFFLE(name, argt, src)                                                        \
    template <class T> inline T name(T v, argt arg, MSL_SITE) {                              \
        __coll::OpI<T> op{v, v, (uint)arg};                                                 \
        __msl::msl_collective(&op, [](void** ops, unsigned mask) {                          \
            T in[32];                                                                       \
            for (int i = 0; i < 32; i++)                                                    \
                if (mask >> i & 1) in[i] = ((__coll::OpI<T>*)ops[i])->in;                   \
            for (int lane = 0; lane < 32; lane++)                                           \
                if (mask >> lane & 1) {                                                     \
                    auto* o = (__coll::OpI<T>*)ops[lane];                                   \
                    long s = (src);                                                         \
                    if (s >= 0 && s < 32 && (mask >> s & 1)) o->out = in[s];                \
                }                                                                           \
        }, __site);                                                                         \
        return op.out;                                                                      \
    }
MSL_SHUFFLE(simd_shuffle, ushort, (long)o->arg)
MSL_SHUFFLE(simd_broadcast, ushort, (long)o->arg)
MSL_SHUFFLE(simd_shuffle_down, ushort, (long)lane + (long)o->arg)
MSL_SHUFFLE(simd_shuffle_up, ushort, (long)lane - (long)o->arg)
MSL_SHUFFLE(simd_shuffle_xor, ushort, (long)(lane ^ (int)o->arg))
MSL_SHUFFLE(simd_shuffle_rotate_down, ushort, (long)((lane + (int)o->arg) & 31))
MSL_SHUFFLE(simd_shuffle_rotate_up, ushort, (long)((lane - (int)o->arg) & 31))
#undef MSL_SHUFFLE

template <class T> inline T simd_broadcast_first(T v, MSL_SITE) {
    __coll::Op1<T> op{v, v};
    __msl::msl_collective(&op, [](void** ops, unsigned mask) {
        T f = ((__coll::Op1<T>*)ops[__builtin_ctz(mask)])->in;
        for (int i = 0; i < 32; i++)
            if (mask >> i & 1) ((__coll::Op1<T>*)ops[i])->out = f;
    }, __site);
    return op.out;
}

struct simd_vote {
    typedef ulong vote_t;
    vote_t v;
    explicit operator vote_t() const { return v; }
    bool all() const { return v == 0xffffffffu; }
    bool any() const { return v != 0; }
};
inline simd_vote simd_ballot(bool b, MSL_SITE) {
    __coll::Op1<uint> op{b ? 1u : 0u, 0};
    __msl::msl_collective(&op, [](void** ops, unsigned mask) {
        uint m = 0;
        for (int i = 0; i < 32; i++)
            if ((mask >> i & 1) && ((__coll::Op1<uint>*)ops[i])->in) m |= 1u << i;
        for (int i = 0; i < 32; i++)
            if (mask >> i & 1) ((__coll::Op1<uint>*)ops[i])->out = m;
    }, __site);
    return simd_vote{op.out};
}
inline bool simd_any(bool b, MSL_SITE) { return simd_or(b ? 1u : 0u, __site) != 0; }
inline bool simd_all(bool b, MSL_SITE) { return simd_and(b ? 1u : 0u, __site) != 0; }
inline bool simd_is_first(MSL_SITE) { return simd_broadcast_first(__msl::msl_lane(), __site) == __msl::msl_lane(); }
inline simd_vote simd_active_threads_mask(MSL_SITE) { return simd_ballot(true, __site); }
inline void simdgroup_barrier(mem_flags, MSL_SITE) {
    __msl::msl_collective(nullptr, [](void**, unsigned) {}, __site);
}

// ---- simdgroup matrices -----------------------------------------------------
// Every lane keeps the whole 8x8 matrix plus a flag saying whether all 64
// values are valid ("full", after a load or fill) or only the lane's own
// two (row l/4, columns 2(l%4) and 2(l%4)+1, as the GPU spreads them) —
// the result of a product. A product of two full matrices is computed per
// lane for its own elements, with no synchronisation (the usual
// load-load-multiply loop); only a product reading a non-full matrix
// gathers the lanes' elements in a collective, which needs all 32 lanes.
template <class T, int R, int C> struct simdgroup_matrix {
    static_assert(R == 8 && C == 8, "only 8x8 simdgroup matrices are supported");
    typedef T elem_t;
    typedef T e2 __attribute__((ext_vector_type(2)));
    T m[64];
    bool full;
    simdgroup_matrix() : full(false) {}
    explicit simdgroup_matrix(T diag) : full(true) {
        for (int i = 0; i < 64; i++) m[i] = (i / 8 == i % 8) ? diag : (T)0;
    }
    static int own(uint lane) { return (int)(lane / 4 * 8 + 2 * (lane % 4)); }
    thread e2& thread_elements() { return *(thread e2*)&m[own(__msl::msl_lane())]; }
    const thread e2& thread_elements() const { return *(const thread e2*)&m[own(__msl::msl_lane())]; }
};
template <class T, int R, int C> inline simdgroup_matrix<T, R, C> make_filled_simdgroup_matrix(T v) {
    simdgroup_matrix<T, R, C> r;
    for (int i = 0; i < 64; i++) r.m[i] = v;
    r.full = true;
    return r;
}

template <class T, class U>
inline void simdgroup_load(thread simdgroup_matrix<T, 8, 8>& d, const U* src, ulong elements_per_row = 8,
                           ulong2 matrix_origin = 0, bool transpose_matrix = false) {
    const U* p = src + matrix_origin.y * elements_per_row + matrix_origin.x;
    if (!transpose_matrix) {
        for (int r = 0; r < 8; r++)
            for (int c = 0; c < 8; c++) d.m[r * 8 + c] = (T)p[r * elements_per_row + c];
    } else {
        for (int r = 0; r < 8; r++)
            for (int c = 0; c < 8; c++) d.m[r * 8 + c] = (T)p[c * elements_per_row + r];
    }
    d.full = true;
}

namespace __coll {
template <class TD, class TA, class TB, class TC> struct Mma {
    simdgroup_matrix<TD, 8, 8>* d;
    const simdgroup_matrix<TA, 8, 8>* a;
    const simdgroup_matrix<TB, 8, 8>* b;
    const simdgroup_matrix<TC, 8, 8>* c;
};
// gather makes the full matrix from every lane's copy of it.
template <class M> inline void gather(float (&out)[64], void** ops, const M* (*pick)(void*)) {
    const M* m0 = pick(ops[0]);
    if (m0->full) {
        for (int i = 0; i < 64; i++) out[i] = (float)m0->m[i];
        return;
    }
    for (int l = 0; l < 32; l++) {
        const M* m = pick(ops[l]);
        int o = M::own(l);
        out[o] = (float)m->m[o];
        out[o + 1] = (float)m->m[o + 1];
    }
}
} // namespace __coll

template <class TD, class TA, class TB, class TC>
__attribute__((always_inline)) inline void simdgroup_multiply_accumulate(thread simdgroup_matrix<TD, 8, 8>& d, const thread simdgroup_matrix<TA, 8, 8>& a,
                                          const thread simdgroup_matrix<TB, 8, 8>& b,
                                          const thread simdgroup_matrix<TC, 8, 8>& c, MSL_SITE) {
    if (a.full && b.full) {
        // this lane's two elements; no other lane's data is needed
        if (!__msl::msl_simd_complete()) {
            __msl::msl_fail("simdgroup_multiply_accumulate needs all 32 lanes of the SIMD-group");
            return;
        }
        int o = simdgroup_matrix<TD, 8, 8>::own(__msl::msl_lane());
        int r = o / 8, c0 = o % 8;
        typedef float f2 __attribute__((ext_vector_type(2)));
        f2 acc = {(float)c.m[o], (float)c.m[o + 1]};
        for (int k = 0; k < 8; k++) {
            f2 bk = {(float)b.m[k * 8 + c0], (float)b.m[k * 8 + c0 + 1]};
            acc += (float)a.m[r * 8 + k] * bk;
        }
        d.m[o] = (TD)acc.x;
        d.m[o + 1] = (TD)acc.y;
        d.full = false;
        return;
    }
    typedef __coll::Mma<TD, TA, TB, TC> Op;
    Op op{&d, &a, &b, &c};
    __msl::msl_collective(&op, [](void** ops, unsigned mask) {
        if (mask != 0xffffffffu) {
            __msl::msl_fail("simdgroup_multiply_accumulate needs all 32 lanes of the SIMD-group");
            return;
        }
        float A[64], B[64], C[64];
        __coll::gather(A, ops, +[](void* p) { return ((Op*)p)->a; });
        __coll::gather(B, ops, +[](void* p) { return ((Op*)p)->b; });
        __coll::gather(C, ops, +[](void* p) { return ((Op*)p)->c; });
        for (int i = 0; i < 8; i++)
            for (int k = 0; k < 8; k++) {
                float aik = A[i * 8 + k];
                for (int j = 0; j < 8; j++) C[i * 8 + j] += aik * B[k * 8 + j];
            }
        for (int l = 0; l < 32; l++) {
            simdgroup_matrix<TD, 8, 8>* m = ((Op*)ops[l])->d;
            for (int i = 0; i < 64; i++) m->m[i] = (TD)C[i];
            m->full = true;
        }
    }, __site);
}
// The typedefs, the store and simdgroup_multiply: written once for the
// executor and CUDA.
#define MSL_SG_LANE() __msl::msl_lane()
#define MSL_SG_SITE_PARAM , MSL_SITE
#define MSL_SG_SITE_ARG , __site
#include "msl_simdgroup.h"

} // namespace metal
