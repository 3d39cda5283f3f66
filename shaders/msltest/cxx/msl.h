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
// The emulation is msl_simdgroup.h's. Lanes are fibers run one after
// another, so besides its two elements each lane keeps the whole matrix
// while it is known (after a fill or a load: "full"); a product of two
// full matrices reads the operands from the lane's own copies with no
// synchronisation (the usual load-load-multiply loop runs at CPU speed).
// Any other product exchanges the operands' elements in one collective:
// the last lane to arrive copies every lane's two elements of A and B to
// every lane (a shuffle per read would be 24 collectives).
template <class T> struct sg_extra {
    T m[64];
    bool full = false;
    void diag(T v) {
        for (int i = 0; i < 64; i++) m[i] = (i / 8 == i % 8) ? v : (T)0;
        full = true;
    }
    void fill(T v) {
        for (int i = 0; i < 64; i++) m[i] = v;
        full = true;
    }
    template <class U> void loaded(const U* p, ulong ld, bool transpose) {
        if (!transpose) { // two loops: each a plain copy the compiler vectorizes
            for (int r = 0; r < 8; r++)
                for (int c = 0; c < 8; c++) m[r * 8 + c] = (T)p[r * ld + c];
        } else {
            for (int r = 0; r < 8; r++)
                for (int c = 0; c < 8; c++) m[r * 8 + c] = (T)p[c * ld + r];
        }
        full = true;
    }
    void changed() { full = false; }
};
namespace __coll {
struct Peers {
    float own[4];
    float (*all)[32][4];
};
} // namespace __coll
template <class T, int R, int C> struct simdgroup_matrix;
template <class TA, class TB> struct sg_peers {
    const simdgroup_matrix<TA, 8, 8>* A = nullptr; // the full operands, or null: v
    const simdgroup_matrix<TB, 8, 8>* B = nullptr;
    float v[32][4];
    static int at(unsigned j, unsigned s) { return (int)(2 * s + j); } // row s/4, column 2(s%4)+j
    __attribute__((always_inline)) sg_peers(const simdgroup_matrix<TA, 8, 8>& a, const simdgroup_matrix<TB, 8, 8>& b, MSL_SITE) {
        if (a.full && b.full && __msl::msl_simd_complete()) {
            A = &a, B = &b;
            return;
        }
        exchange((float)a.e.x, (float)a.e.y, (float)b.e.x, (float)b.e.y, a.full && b.full, __site);
    }
    __attribute__((noinline)) void exchange(float a0, float a1, float b0, float b1, bool partial, unsigned __site) {
        if (partial) { // full operands, but not all 32 lanes
            __msl::msl_fail("simdgroup_multiply_accumulate needs all 32 lanes of the SIMD-group");
            __builtin_memset(v, 0, sizeof v);
            return;
        }
        __coll::Peers op{{a0, a1, b0, b1}, &v};
        __msl::msl_collective(&op, [](void** ops, unsigned mask) {
            bool whole = mask == 0xffffffffu;
            if (!whole) __msl::msl_fail("simdgroup_multiply_accumulate needs all 32 lanes of the SIMD-group");
            for (int l = 0; l < 32; l++) {
                if (!(mask >> l & 1)) continue;
                float(&dst)[32][4] = *((__coll::Peers*)ops[l])->all;
                for (int s = 0; s < 32; s++)
                    for (int i = 0; i < 4; i++) dst[s][i] = whole ? ((__coll::Peers*)ops[s])->own[i] : 0.0f;
            }
        }, __site);
    }
    __attribute__((always_inline)) float a(unsigned j, unsigned s) const { return A ? (float)A->m[at(j, s)] : v[s][j]; }
    __attribute__((always_inline)) float b(unsigned j, unsigned s) const { return B ? (float)B->m[at(j, s)] : v[s][2 + j]; }
};
#define MSL_SG_LANE() __msl::msl_lane()
#define MSL_SG_INLINE __attribute__((always_inline)) // the fast path's reads fold into the loop
#define MSL_SG_SITE_PARAM , MSL_SITE
#define MSL_SG_SITE_ARG , __site
#include "msl_simdgroup.h"

} // namespace metal
