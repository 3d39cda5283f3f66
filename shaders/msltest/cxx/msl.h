// msl.h: the Metal Shading Language subset Hark's kernels use, as clang C++
// (see ../README.md for what is covered and where it differs from Metal).
// It is included before the generated translation unit that holds every
// .metal file; it includes no system header, so the only overloads a kernel
// sees are metal's.
#pragma once
#include "abi.h"

typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;
typedef unsigned long ulong;
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long int64_t;
typedef unsigned long uint64_t;
typedef unsigned long size_t;
typedef long ptrdiff_t;
// half is clang's storage-only __fp16: arithmetic happens in float and is
// rounded to half when stored (Metal computes in half).
typedef __fp16 half;

// Address spaces: for execution every pointer is a plain CPU pointer; the
// type-check (MSL_CHECK, clang -fsyntax-only) maps them to clang address
// spaces so that mixing them is an error, as in MSL.
#ifdef MSL_CHECK
#define device __attribute__((address_space(1)))
#define constant const __attribute__((address_space(2)))
#define threadgroup __attribute__((address_space(3)))
#else
#define device
#define constant const
#define threadgroup
#endif
#define thread
#define kernel
#define threadgroup_imageblock

#define MSL_VEC(T, name)                                           \
    typedef T name##2 __attribute__((ext_vector_type(2)));          \
    typedef T name##3 __attribute__((ext_vector_type(3)));          \
    typedef T name##4 __attribute__((ext_vector_type(4)));
MSL_VEC(float, float)
MSL_VEC(half, half)
MSL_VEC(int, int)
MSL_VEC(uint, uint)
MSL_VEC(short, short)
MSL_VEC(ushort, ushort)
MSL_VEC(char, char)
MSL_VEC(uchar, uchar)
MSL_VEC(long, long)
MSL_VEC(ulong, ulong)
#undef MSL_VEC
typedef float packed_float2 __attribute__((ext_vector_type(2), aligned(4)));
typedef float packed_float4 __attribute__((ext_vector_type(4), aligned(4)));
typedef half packed_half2 __attribute__((ext_vector_type(2), aligned(2)));
typedef half packed_half4 __attribute__((ext_vector_type(4), aligned(2)));
struct packed_float3 {
    float x, y, z;
    packed_float3() = default;
    packed_float3(float3 v) : x(v.x), y(v.y), z(v.z) {}
    operator float3() const { float3 r = {x, y, z}; return r; }
};

#define INFINITY __builtin_inff()
#define NAN __builtin_nanf("")
#define MAXFLOAT __FLT_MAX__
#define FLT_MAX __FLT_MAX__
#define FLT_MIN __FLT_MIN__
#define FLT_EPSILON __FLT_EPSILON__
#define HALF_MAX ((half)65504.0f)
#define HALF_MIN ((half)6.103515625e-05f)
#define INT_MAX __INT_MAX__
#define INT_MIN (-__INT_MAX__ - 1)
#define UINT_MAX (__INT_MAX__ * 2u + 1u)
#define SHRT_MAX __SHRT_MAX__
#define M_PI_F 3.14159265358979323846f
#define M_PI_2_F 1.57079632679489661923f
#define M_1_PI_F 0.318309886183790671538f
#define M_2_SQRTPI_F 1.12837916709551257390f
#define M_E_F 2.71828182845904523536f
#define M_LN2_F 0.693147180559945309417f
#define M_LN10_F 2.30258509299404568402f
#define M_LOG2E_F 1.44269504088896340736f
#define M_SQRT2_F 1.41421356237309504880f
#define M_SQRT1_2_F 0.707106781186547524401f

namespace __msl {
// Runtime entry points (runtime.cpp).
typedef void (*CollFn)(void** ops, unsigned mask);
extern "C" void msl_collective(void* op, CollFn fn, unsigned site);
extern "C" void msl_barrier();
extern "C" void* msl_tg_alloc(unsigned long size, unsigned long align);
inline unsigned msl_lane() { return __msl_abi::cur.lane; }
inline int msl_simd_complete() { return __msl_abi::cur.simd_complete; } // the SIMD-group has 32 lanes
extern "C" void msl_fail(const char* msg);

template <class T> struct vinfo {
    typedef T elem;
    static constexpr int n = 1;
    static constexpr bool vec = false;
};
#define MSL_VINFO(T, name)                                                                         \
    template <> struct vinfo<name##2> { typedef T elem; static constexpr int n = 2; static constexpr bool vec = true; }; \
    template <> struct vinfo<name##3> { typedef T elem; static constexpr int n = 3; static constexpr bool vec = true; }; \
    template <> struct vinfo<name##4> { typedef T elem; static constexpr int n = 4; static constexpr bool vec = true; };
MSL_VINFO(float, float)
MSL_VINFO(half, half)
MSL_VINFO(int, int)
MSL_VINFO(uint, uint)
MSL_VINFO(short, short)
MSL_VINFO(ushort, ushort)
MSL_VINFO(char, char)
MSL_VINFO(uchar, uchar)
MSL_VINFO(long, long)
MSL_VINFO(ulong, ulong)
#undef MSL_VINFO

template <bool B, class T = void> struct enable_if {};
template <class T> struct enable_if<true, T> { typedef T type; };
template <class V> using if_vec = typename enable_if<vinfo<V>::vec, V>::type;
template <class A, class B> struct same { static constexpr bool v = false; };
template <class A> struct same<A, A> { static constexpr bool v = true; };

template <class A> inline A first(A a) { return a; }
template <class E, class V, class A> inline void put(V& r, int& k, A a) {
    if constexpr (vinfo<A>::vec) {
        for (int i = 0; i < vinfo<A>::n; i++) r[k++] = (E)a[i];
    } else {
        r[k++] = (E)a;
    }
}

// make builds a vector the way MSL's constructors do: one scalar splats,
// one vector of the same width converts, otherwise components concatenate.
// The generator rewrites `float4(...)` into `__msl::make<float4>(...)`.
template <class V, class... A> inline V make(A... a) {
    typedef typename vinfo<V>::elem E;
    constexpr int total = (vinfo<A>::n + ... + 0);
    V r;
    if constexpr (sizeof...(A) == 0) {
        r = (V)(E)0;
    } else if constexpr (sizeof...(A) == 1 && total == 1) {
        E s = (E)first(a...);
        for (int i = 0; i < vinfo<V>::n; i++) r[i] = s;
    } else {
        static_assert(total == vinfo<V>::n, "vector constructor: component count mismatch");
        int k = 0;
        (put<E>(r, k, a), ...);
    }
    return r;
}

inline unsigned site(unsigned line, unsigned col) { return line * 4096u + col; }

// Arguments of the generated trampolines: bound by the parameter's type.
struct Ptr {
    void* p;
    template <class T> operator T*() const { return (T*)p; }
};
struct Ref {
    void* p;
    template <class T> operator T&() const { return *(T*)p; }
};
struct Dim {
    unsigned x, y, z;
    operator uint() const { return x; }
    operator int() const { return (int)x; }
    operator ushort() const { return (ushort)x; }
    operator short() const { return (short)x; }
    operator uint2() const { uint2 r = {x, y}; return r; }
    operator uint3() const { uint3 r = {x, y, z}; return r; }
    operator ushort2() const { ushort2 r = {(ushort)x, (ushort)y}; return r; }
    operator ushort3() const { ushort3 r = {(ushort)x, (ushort)y, (ushort)z}; return r; }
    operator int2() const { int2 r = {(int)x, (int)y}; return r; }
    operator int3() const { int3 r = {(int)x, (int)y, (int)z}; return r; }
};
template <class T> inline T fc_cast(unsigned v) {
    if constexpr (same<T, float>::v) return __builtin_bit_cast(float, v);
    else if constexpr (same<T, bool>::v) return v != 0;
    else return (T)v;
}
} // namespace __msl

#define MSL_SITE unsigned __site = __msl::site(__builtin_LINE(), __builtin_COLUMN())

namespace metal {

template <class T, class U> inline T as_type(U u) {
    static_assert(sizeof(T) == sizeof(U), "as_type: sizes differ");
    return __builtin_bit_cast(T, u);
}

// ---- math -----------------------------------------------------------------
#define MSL_UNARY(name, expr)                                                            \
    inline float name(float x) { return expr; }                                         \
    inline half name(half x) { return (half)name((float)x); }                           \
    inline float name(double x) { return name((float)x); }                              \
    template <class V, class = __msl::if_vec<V>> inline V name(V v) {                    \
        V r;                                                                            \
        for (int i = 0; i < __msl::vinfo<V>::n; i++) r[i] = name(v[i]);                 \
        return r;                                                                       \
    }
MSL_UNARY(exp, __builtin_expf(x))
MSL_UNARY(exp2, __builtin_exp2f(x))
MSL_UNARY(exp10, __builtin_powf(10.0f, x))
MSL_UNARY(log, __builtin_logf(x))
MSL_UNARY(log2, __builtin_log2f(x))
MSL_UNARY(log10, __builtin_log10f(x))
MSL_UNARY(sqrt, __builtin_sqrtf(x))
MSL_UNARY(rsqrt, 1.0f / __builtin_sqrtf(x))
MSL_UNARY(sin, __builtin_sinf(x))
MSL_UNARY(cos, __builtin_cosf(x))
MSL_UNARY(tan, __builtin_tanf(x))
MSL_UNARY(asin, __builtin_asinf(x))
MSL_UNARY(acos, __builtin_acosf(x))
MSL_UNARY(atan, __builtin_atanf(x))
MSL_UNARY(sinh, __builtin_sinhf(x))
MSL_UNARY(cosh, __builtin_coshf(x))
MSL_UNARY(tanh, __builtin_tanhf(x))
MSL_UNARY(fabs, __builtin_fabsf(x))
MSL_UNARY(floor, __builtin_floorf(x))
MSL_UNARY(ceil, __builtin_ceilf(x))
MSL_UNARY(round, __builtin_roundf(x))
MSL_UNARY(rint, __builtin_rintf(x))
MSL_UNARY(trunc, __builtin_truncf(x))
MSL_UNARY(fract, x - __builtin_floorf(x))
MSL_UNARY(saturate, x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x))
MSL_UNARY(sign, x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f))
#undef MSL_UNARY

inline float abs(float x) { return __builtin_fabsf(x); }
inline half abs(half x) { return (half)__builtin_fabsf((float)x); }
inline int abs(int x) { return x < 0 ? -x : x; }
inline short abs(short x) { return x < 0 ? -x : x; }
inline char abs(char x) { return x < 0 ? -x : x; }
template <class V, class = __msl::if_vec<V>> inline V abs(V v) {
    V r;
    for (int i = 0; i < __msl::vinfo<V>::n; i++) r[i] = abs(v[i]);
    return r;
}

#define MSL_BINARY(name, expr)                                                           \
    inline float name(float x, float y) { return expr; }                                \
    inline half name(half x, half y) { return (half)name((float)x, (float)y); }         \
    template <class V, class = __msl::if_vec<V>> inline V name(V a, V b) {               \
        V r;                                                                            \
        for (int i = 0; i < __msl::vinfo<V>::n; i++) r[i] = name(a[i], b[i]);           \
        return r;                                                                       \
    }
MSL_BINARY(pow, __builtin_powf(x, y))
MSL_BINARY(powr, __builtin_powf(x, y))
MSL_BINARY(fmin, __builtin_fminf(x, y))
MSL_BINARY(fmax, __builtin_fmaxf(x, y))
MSL_BINARY(fmod, __builtin_fmodf(x, y))
MSL_BINARY(atan2, __builtin_atan2f(x, y))
MSL_BINARY(copysign, __builtin_copysignf(x, y))
MSL_BINARY(step, y < x ? 0.0f : 1.0f)
#undef MSL_BINARY

// min/max: Metal's fmin/fmax semantics for floats (a NaN operand yields
// the other), plain comparison for integers.
template <class T> inline T max(T a, T b) {
    if constexpr (__msl::vinfo<T>::vec) {
        T r;
        for (int i = 0; i < __msl::vinfo<T>::n; i++) r[i] = max(a[i], b[i]);
        return r;
    } else if constexpr (__msl::same<T, float>::v) {
        return __builtin_fmaxf(a, b);
    } else if constexpr (__msl::same<T, half>::v) {
        return (half)__builtin_fmaxf((float)a, (float)b);
    } else {
        return a > b ? a : b;
    }
}
template <class T> inline T min(T a, T b) {
    if constexpr (__msl::vinfo<T>::vec) {
        T r;
        for (int i = 0; i < __msl::vinfo<T>::n; i++) r[i] = min(a[i], b[i]);
        return r;
    } else if constexpr (__msl::same<T, float>::v) {
        return __builtin_fminf(a, b);
    } else if constexpr (__msl::same<T, half>::v) {
        return (half)__builtin_fminf((float)a, (float)b);
    } else {
        return a < b ? a : b;
    }
}
template <class T> inline T clamp(T x, T lo, T hi) { return min(max(x, lo), hi); }
template <class V, class = __msl::if_vec<V>>
inline V clamp(V x, typename __msl::vinfo<V>::elem lo, typename __msl::vinfo<V>::elem hi) {
    V r;
    for (int i = 0; i < __msl::vinfo<V>::n; i++) r[i] = clamp(x[i], lo, hi);
    return r;
}
inline float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
inline half fma(half a, half b, half c) { return (half)__builtin_fmaf((float)a, (float)b, (float)c); }
template <class V, class = __msl::if_vec<V>> inline V fma(V a, V b, V c) {
    V r;
    for (int i = 0; i < __msl::vinfo<V>::n; i++) r[i] = fma(a[i], b[i], c[i]);
    return r;
}
inline float mix(float x, float y, float a) { return x + (y - x) * a; }
template <class V, class = __msl::if_vec<V>> inline V mix(V x, V y, V a) { return x + (y - x) * a; }
template <class T> inline T select(T a, T b, bool c) { return c ? b : a; }
template <class V, class C, class = __msl::if_vec<V>> inline V select(V a, V b, C c) {
    V r;
    for (int i = 0; i < __msl::vinfo<V>::n; i++) r[i] = c[i] ? b[i] : a[i];
    return r;
}
template <class V, class = __msl::if_vec<V>> inline typename __msl::vinfo<V>::elem dot(V a, V b) {
    typedef typename __msl::vinfo<V>::elem E;
    float s = 0.0f;
    for (int i = 0; i < __msl::vinfo<V>::n; i++) s += (float)a[i] * (float)b[i];
    return (E)s;
}
template <class V, class = __msl::if_vec<V>> inline typename __msl::vinfo<V>::elem length(V a) {
    return sqrt(dot(a, a));
}
template <class V, class = __msl::if_vec<V>> inline V normalize(V a) { return a * rsqrt(dot(a, a)); }
inline bool isnan(float x) { return __builtin_isnan(x); }
inline bool isnan(half x) { return __builtin_isnan((float)x); }
inline bool isinf(float x) { return __builtin_isinf(x); }
inline bool isinf(half x) { return __builtin_isinf((float)x); }
inline bool isfinite(float x) { return __builtin_isfinite(x); }
inline bool isfinite(half x) { return __builtin_isfinite((float)x); }
inline bool signbit(float x) { return __builtin_signbit(x); }
template <class V, class = __msl::if_vec<V>> inline bool all(V v) {
    for (int i = 0; i < __msl::vinfo<V>::n; i++)
        if (!v[i]) return false;
    return true;
}
template <class V, class = __msl::if_vec<V>> inline bool any(V v) {
    for (int i = 0; i < __msl::vinfo<V>::n; i++)
        if (v[i]) return true;
    return false;
}
inline bool all(bool b) { return b; }
inline bool any(bool b) { return b; }
inline uint popcount(uint x) { return __builtin_popcount(x); }
inline uint clz(uint x) { return x ? __builtin_clz(x) : 32; }
inline uint ctz(uint x) { return x ? __builtin_ctz(x) : 32; }
inline ulong popcount(ulong x) { return __builtin_popcountl(x); }

namespace fast { using namespace metal; }
namespace precise { using namespace metal; }

template <class T> struct numeric_limits;
template <> struct numeric_limits<float> {
    static constexpr float max() { return __FLT_MAX__; }
    static constexpr float min() { return __FLT_MIN__; }
    static constexpr float lowest() { return -__FLT_MAX__; }
    static constexpr float infinity() { return __builtin_inff(); }
    static constexpr float epsilon() { return __FLT_EPSILON__; }
    static constexpr float quiet_NaN() { return __builtin_nanf(""); }
};
template <> struct numeric_limits<int> {
    static constexpr int max() { return __INT_MAX__; }
    static constexpr int min() { return -__INT_MAX__ - 1; }
    static constexpr int lowest() { return -__INT_MAX__ - 1; }
};
template <> struct numeric_limits<uint> {
    static constexpr uint max() { return __INT_MAX__ * 2u + 1u; }
    static constexpr uint min() { return 0; }
    static constexpr uint lowest() { return 0; }
};

// ---- synchronisation ------------------------------------------------------
enum class mem_flags : unsigned { mem_none = 0, mem_device = 1, mem_threadgroup = 2, mem_texture = 4, mem_threadgroup_imageblock = 8 };
inline mem_flags operator|(mem_flags a, mem_flags b) { return (mem_flags)((unsigned)a | (unsigned)b); }
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
typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;

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
template <class T, class U>
inline void simdgroup_store(const thread simdgroup_matrix<T, 8, 8>& s, U* dst, ulong elements_per_row = 8,
                            ulong2 matrix_origin = 0, bool transpose_matrix = false) {
    uint l = __msl::msl_lane();
    ulong r = l / 4, c = 2 * (l % 4);
    U* p = dst + matrix_origin.y * elements_per_row + matrix_origin.x;
    for (int j = 0; j < 2; j++) {
        ulong row = r, col = c + j;
        if (transpose_matrix) { ulong t = row; row = col; col = t; }
        p[row * elements_per_row + col] = (U)s.m[r * 8 + c + j];
    }
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
template <class TD, class TA, class TB>
inline void simdgroup_multiply(thread simdgroup_matrix<TD, 8, 8>& d, const thread simdgroup_matrix<TA, 8, 8>& a,
                               const thread simdgroup_matrix<TB, 8, 8>& b, MSL_SITE) {
    simdgroup_matrix<TD, 8, 8> z = make_filled_simdgroup_matrix<TD, 8, 8>((TD)0);
    simdgroup_multiply_accumulate(d, a, b, z, __site);
}

// ---- atomics ----------------------------------------------------------------
// Real atomics: threadgroups run in parallel on CPU threads.
enum memory_order { memory_order_relaxed = 0, memory_order_acquire = 2, memory_order_release = 3, memory_order_acq_rel = 4, memory_order_seq_cst = 5 };
template <class T> struct _atomic { T v; };
typedef _atomic<uint> atomic_uint;
typedef _atomic<int> atomic_int;
typedef _atomic<float> atomic_float;
typedef _atomic<bool> atomic_bool;

// The object pointer is generic so device and threadgroup atomics both
// match (the type-check gives each its own address space).
template <class P> using _elem_t = decltype(((P) nullptr)->v);
template <class P> inline void atomic_store_explicit(P o, _elem_t<P> v, memory_order) { __atomic_store_n(&o->v, v, __ATOMIC_SEQ_CST); }
template <class P> inline _elem_t<P> atomic_load_explicit(P o, memory_order) { return __atomic_load_n(&o->v, __ATOMIC_SEQ_CST); }
template <class P> inline _elem_t<P> atomic_exchange_explicit(P o, _elem_t<P> v, memory_order) { return __atomic_exchange_n(&o->v, v, __ATOMIC_SEQ_CST); }
template <class P, class E>
inline bool atomic_compare_exchange_weak_explicit(P o, E* expected, _elem_t<P> desired, memory_order, memory_order) {
    if constexpr (__msl::same<_elem_t<P>, float>::v) {
        uint e = __builtin_bit_cast(uint, (float)*expected);
        bool ok = __atomic_compare_exchange_n((volatile uint*)&o->v, &e, __builtin_bit_cast(uint, desired), false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        *expected = __builtin_bit_cast(float, e);
        return ok;
    } else {
        _elem_t<P> e = *expected;
        bool ok = __atomic_compare_exchange_n(&o->v, &e, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        *expected = e;
        return ok;
    }
}
template <class P, class E>
inline bool atomic_compare_exchange_strong_explicit(P o, E* expected, _elem_t<P> desired, memory_order a, memory_order b) {
    return atomic_compare_exchange_weak_explicit(o, expected, desired, a, b);
}
#define MSL_ATOMIC_RMW(name, builtin, isadd)                                               \
    template <class P> inline _elem_t<P> name(P o, _elem_t<P> v, memory_order) {            \
        if constexpr (__msl::same<_elem_t<P>, float>::v) {                                  \
            static_assert(isadd || sizeof(P) == 0, "atomic_float supports fetch_add only");  \
            volatile uint* p = (volatile uint*)&o->v;                                       \
            uint old = __atomic_load_n(p, __ATOMIC_SEQ_CST);                               \
            while (!__atomic_compare_exchange_n(p, &old, __builtin_bit_cast(uint, __builtin_bit_cast(float, old) + v), true, \
                                                __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}     \
            return __builtin_bit_cast(float, old);                                          \
        } else {                                                                            \
            return builtin(&o->v, v, __ATOMIC_SEQ_CST);                                     \
        }                                                                                   \
    }
MSL_ATOMIC_RMW(atomic_fetch_add_explicit, __atomic_fetch_add, true)
MSL_ATOMIC_RMW(atomic_fetch_sub_explicit, __atomic_fetch_sub, false)
MSL_ATOMIC_RMW(atomic_fetch_and_explicit, __atomic_fetch_and, false)
MSL_ATOMIC_RMW(atomic_fetch_or_explicit, __atomic_fetch_or, false)
MSL_ATOMIC_RMW(atomic_fetch_xor_explicit, __atomic_fetch_xor, false)
#undef MSL_ATOMIC_RMW
#define MSL_ATOMIC_MINMAX(name, cmp)                                                        \
    template <class P> inline _elem_t<P> name(P o, _elem_t<P> v, memory_order) {            \
        _elem_t<P> old = __atomic_load_n(&o->v, __ATOMIC_SEQ_CST);                          \
        while ((v cmp old) && !__atomic_compare_exchange_n(&o->v, &old, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {} \
        return old;                                                                         \
    }
MSL_ATOMIC_MINMAX(atomic_fetch_max_explicit, >)
MSL_ATOMIC_MINMAX(atomic_fetch_min_explicit, <)
#undef MSL_ATOMIC_MINMAX

} // namespace metal
