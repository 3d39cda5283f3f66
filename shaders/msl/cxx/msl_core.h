// msl_core.h: the portable part of the MSL compatibility layer (types,
// vectors, constructors, math, limits), shared by the CPU executor (shaders/msltest/cxx/msl.h)
// and the CUDA translation (../../../cuda/cxx/msl_cuda.h). It includes no
// system header. A backend may redirect the __builtin_* math it uses
// (NVPTX has no libm) with macros before including it.
#pragma once

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
// ---- atomics ----------------------------------------------------------------
// Real atomics (__atomic builtins): threadgroups run in parallel on CPU
// threads, and clang lowers them to atom instructions on NVPTX.
// Plain loads and stores of atomics go through these two macros: NVPTX (LLVM
// 14) cannot select seq_cst atomic loads and stores, so msl_cuda.h makes
// them volatile accesses (Metal's atomics are relaxed).
#ifndef MSL_ATOMIC_LOAD
#define MSL_ATOMIC_LOAD(p) __atomic_load_n(p, __ATOMIC_SEQ_CST)
#define MSL_ATOMIC_STORE(p, v) __atomic_store_n(p, v, __ATOMIC_SEQ_CST)
#endif
enum memory_order { memory_order_relaxed = 0, memory_order_acquire = 2, memory_order_release = 3, memory_order_acq_rel = 4, memory_order_seq_cst = 5 };
// A fence at device scope (MSL 3.2's atomic_thread_fence; the scope is
// always the device's here): a sequentially consistent fence on the CPU,
// msl_cuda.h's at GPU scope (sequentially consistent, or acquire-release
// for any weaker order).
enum thread_scope { thread_scope_thread, thread_scope_simdgroup, thread_scope_threadgroup, thread_scope_device };
#ifndef MSL_DEVICE_FENCE
#define MSL_DEVICE_FENCE(seqcst) __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif
inline void atomic_thread_fence(mem_flags, memory_order o, thread_scope = thread_scope_device) {
    MSL_DEVICE_FENCE(o == memory_order_seq_cst);
}
template <class T> struct _atomic { T v; };
typedef _atomic<uint> atomic_uint;
typedef _atomic<int> atomic_int;
typedef _atomic<float> atomic_float;
typedef _atomic<bool> atomic_bool;

// The object pointer is generic so device and threadgroup atomics both
// match (the type-check gives each its own address space).
template <class P> using _elem_t = decltype(((P) nullptr)->v);
template <class P> inline void atomic_store_explicit(P o, _elem_t<P> v, memory_order) { MSL_ATOMIC_STORE(&o->v, v); }
template <class P> inline _elem_t<P> atomic_load_explicit(P o, memory_order) { return MSL_ATOMIC_LOAD(&o->v); }
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
            uint old = MSL_ATOMIC_LOAD(p);                               \
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
        _elem_t<P> old = MSL_ATOMIC_LOAD(&o->v);                          \
        while ((v cmp old) && !__atomic_compare_exchange_n(&o->v, &old, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {} \
        return old;                                                                         \
    }
MSL_ATOMIC_MINMAX(atomic_fetch_max_explicit, >)
MSL_ATOMIC_MINMAX(atomic_fetch_min_explicit, <)
#undef MSL_ATOMIC_MINMAX


} // namespace metal
