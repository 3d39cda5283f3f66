// Shared declarations of every Hark kernel: the Args block (README.md) and,
// as kernels land, the ggml block layouts and dequantisation helpers.
#include <metal_stdlib>
using namespace metal;

// Args (the params words of every kernel by name, the binding mask and the
// grid) comes from kargs.h, generated from the kernel contract and placed
// before this file in the library source (shaders.Source).
static inline bool has_bind(constant Args& a, int i) { return (a.bind_mask >> i) & 1u; }

// GELU's tanh approximation (elementwise.metal's gelu and gelu_mul,
// matvec.metal's gelu_mul_mat_vec), with 1+tanh(y) = 2 - 2/(e^{2y}+1) (no
// tanh overflow).
static inline float gelu_tanh(float x) {
    float y = 0.7978845608028654f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (2.0f - 2.0f / (exp(2.0f * y) + 1.0f));
}

// Exact GELU with erf from Abramowitz & Stegun 7.1.26 (MSL has no erf;
// elementwise.metal's gelu); for x < 0
// the polynomial gives 1+erf directly (no cancellation).
static inline float gelu_erf(float x) {
    float z = x * M_SQRT1_2_F;
    float az = fabs(z);
    float t = 1.0f / (1.0f + 0.3275911f * az);
    float p = ((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t + 0.254829592f) * t;
    float c = p * exp(-az * az); // 1 - erf(|z|)
    return z < 0.0f ? 0.5f * x * c : 0.5f * x * (2.0f - c);
}

// ew_reduce (elementwise.metal's softmax, whisper_filter.metal) combines v over the threadgroup (op 0: max, 1: sum) through
// SIMD-group reductions and one partial per SIMD-group.
static inline float ew_reduce(float v, int op, threadgroup float* part, uint sg, uint lane, uint nsg) {
    v = op == 0 ? simd_max(v) : simd_sum(v);
    if (lane == 0) part[sg] = v;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float r = part[0];
    for (uint i = 1; i < nsg; i++) r = op == 0 ? max(r, part[i]) : r + part[i];
    threadgroup_barrier(mem_flags::mem_threadgroup); // part is reused
    return r;
}

// ===========================================================================
// ggml weight blocks and dequantisation (matrix kernels: matvec.metal,
// matmul.metal, embed.metal, conv1d.metal). Owned by the matrix kernels;
// elementwise helpers go above this section.
//
// Every weight type is a struct whose size is ggml's block size in bytes and
// whose enum QK is its elements per block (1 for the float types, which are
// one-element "blocks"). A row of k elements of type B is k/QK structs.
// deq16(b, il, o) decodes elements [16*il, 16*il+16) of block *b into o[0..15]
// (il < QK/16), with the formulas of engine/ggml/dequant.go; load16(row, e0,
// k, o) decodes elements [e0, e0+16) of a row, e0 a multiple of 16, zero
// past k (only float rows can end inside a 16-element chunk: quantized rows
// are whole blocks of 32 or 256).
// Their 16-element loops are marked #pragma unroll: clang otherwise unrolled
// some of them only by two once inlined, leaving o[] (and the caller's
// arrays) in local memory on CUDA (issue #34).
// ===========================================================================

struct w_f32  { float v;  enum { QK = 1 }; };
struct w_f16  { half v;   enum { QK = 1 }; };
struct w_bf16 { ushort v; enum { QK = 1 }; }; // bfloat16 bits

// Legacy 32-element blocks. Nibble order: byte j holds element j (low) and
// element j+16 (high).
struct block_q4_0 { half d; uchar qs[16]; enum { QK = 32 }; };
struct block_q4_1 { half d; half m; uchar qs[16]; enum { QK = 32 }; };
struct block_q5_0 { half d; uchar qh[4]; uchar qs[16]; enum { QK = 32 }; };
struct block_q5_1 { half d; half m; uchar qh[4]; uchar qs[16]; enum { QK = 32 }; };
struct block_q8_0 { half d; int8_t qs[32]; enum { QK = 32 }; };
struct block_iq4_nl { half d; uchar qs[16]; enum { QK = 32 }; };

// K-quant 256-element super-blocks (layouts: engine/ggml/blocks_k.go).
struct block_q2_k { uchar scales[16]; uchar qs[64]; half d; half dmin; enum { QK = 256 }; };
struct block_q3_k { uchar hmask[32]; uchar qs[64]; uchar scales[12]; half d; enum { QK = 256 }; };
struct block_q4_k { half d; half dmin; uchar scales[12]; uchar qs[128]; enum { QK = 256 }; };
struct block_q5_k { half d; half dmin; uchar scales[12]; uchar qh[32]; uchar qs[128]; enum { QK = 256 }; };
struct block_q6_k { uchar ql[128]; uchar qh[64]; int8_t scales[16]; half d; enum { QK = 256 }; };

static_assert(sizeof(block_q4_0) == 18, "q4_0");
static_assert(sizeof(block_q4_1) == 20, "q4_1");
static_assert(sizeof(block_q5_0) == 22, "q5_0");
static_assert(sizeof(block_q5_1) == 24, "q5_1");
static_assert(sizeof(block_q8_0) == 34, "q8_0");
static_assert(sizeof(block_iq4_nl) == 18, "iq4_nl");
static_assert(sizeof(block_q2_k) == 84, "q2_K");
static_assert(sizeof(block_q3_k) == 110, "q3_K");
static_assert(sizeof(block_q4_k) == 144, "q4_K");
static_assert(sizeof(block_q5_k) == 176, "q5_K");
static_assert(sizeof(block_q6_k) == 210, "q6_K");

constant int8_t iq4nl_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

static inline float bf16_to_float(ushort b) { return as_type<float>(uint(b) << 16); }

// q4_0 and q8_0 read their quants two bytes at a time (blocks are 18 and
// 34 bytes, so 2-byte alignment is all a block has): half the loads.
static inline void deq16(device const block_q4_0* b, int il, thread float* o) {
    const float d = float(b->d);
    const int sh = 4 * il;
    device const ushort* q = (device const ushort*)b->qs;
    #pragma unroll
    for (int i = 0; i < 8; ++i) {
        const uint v = uint(q[i]) >> sh;
        o[2 * i] = float(int(v & 15) - 8) * d;
        o[2 * i + 1] = float(int((v >> 8) & 15) - 8) * d;
    }
}

static inline void deq16(device const block_q4_1* b, int il, thread float* o) {
    const float d = float(b->d), m = float(b->m);
    const int sh = 4 * il;
    #pragma unroll
    for (int i = 0; i < 16; ++i) o[i] = float((b->qs[i] >> sh) & 15) * d + m;
}

static inline uint q5_high_bits(device const uchar* qh) {
    return uint(qh[0]) | uint(qh[1]) << 8 | uint(qh[2]) << 16 | uint(qh[3]) << 24;
}

static inline void deq16(device const block_q5_0* b, int il, thread float* o) {
    const float d = float(b->d);
    const uint qh = q5_high_bits(b->qh) >> (16 * il);
    const int sh = 4 * il;
    #pragma unroll
    for (int i = 0; i < 16; ++i) {
        const int code = int((b->qs[i] >> sh) & 15) | int((qh >> i) & 1) << 4;
        o[i] = float(code - 16) * d;
    }
}

static inline void deq16(device const block_q5_1* b, int il, thread float* o) {
    const float d = float(b->d), m = float(b->m);
    const uint qh = q5_high_bits(b->qh) >> (16 * il);
    const int sh = 4 * il;
    #pragma unroll
    for (int i = 0; i < 16; ++i) {
        const int code = int((b->qs[i] >> sh) & 15) | int((qh >> i) & 1) << 4;
        o[i] = float(code) * d + m;
    }
}

static inline void deq16(device const block_q8_0* b, int il, thread float* o) {
    const float d = float(b->d);
    device const ushort* q = (device const ushort*)(b->qs + 16 * il);
    #pragma unroll
    for (int i = 0; i < 8; ++i) {
        const uint v = q[i]; // little-endian: element 2i in the low byte
        o[2 * i] = float(int(v << 24) >> 24) * d;
        o[2 * i + 1] = float(int(v << 16) >> 24) * d;
    }
}

static inline void deq16(device const block_iq4_nl* b, int il, thread float* o) {
    const float d = float(b->d);
    const int sh = 4 * il;
    #pragma unroll
    for (int i = 0; i < 16; ++i) o[i] = d * float(iq4nl_values[(b->qs[i] >> sh) & 15]);
}

// Q2_K/Q3_K/Q6_K chunk il covers e = 128h + 32j + l with h = il/8,
// j = (il/2)%4, l = 16*(il%2) + i; its scale is sub-block il.
static inline void deq16(device const block_q2_k* b, int il, thread float* o) {
    const int h = il / 8, j = (il / 2) % 4, l0 = 16 * (il % 2);
    const uchar s = b->scales[il];
    const float dl = float(b->d) * float(s & 15), ml = float(b->dmin) * float(s >> 4);
    device const uchar* q = b->qs + 32 * h + l0;
    #pragma unroll
    for (int i = 0; i < 16; ++i) o[i] = dl * float((q[i] >> (2 * j)) & 3) - ml;
}

static inline void deq16(device const block_q3_k* b, int il, thread float* o) {
    const int h = il / 8, j = (il / 2) % 4, l0 = 16 * (il % 2);
    device const uchar* sc = b->scales;
    const int lo = il < 8 ? (sc[il] & 15) : (sc[il - 8] >> 4);
    const int hi = (sc[8 + il % 4] >> (2 * (il / 4))) & 3;
    const float dl = float(b->d) * float((lo | hi << 4) - 32);
    const uchar mask = uchar(1 << (4 * h + j));
    device const uchar* q = b->qs + 32 * h + l0;
    device const uchar* hm = b->hmask + l0;
    #pragma unroll
    for (int i = 0; i < 16; ++i) {
        const int code = int((q[i] >> (2 * j)) & 3) - ((hm[i] & mask) ? 0 : 4);
        o[i] = dl * float(code);
    }
}

// scale_min_k4 unpacks the 6-bit scale and min of sub-block j (0..7) of a
// Q4_K/Q5_K block (ggml.ScaleMinK4).
static inline void scale_min_k4(int j, device const uchar* q, thread int& sc, thread int& m) {
    if (j < 4) {
        sc = q[j] & 63;
        m = q[j + 4] & 63;
    } else {
        sc = (q[j + 4] & 15) | ((q[j - 4] >> 6) << 4);
        m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// Q4_K/Q5_K chunk il lies in sub-block s = il/2 (32 elements), l = 16*(il%2) + i.
static inline void deq16(device const block_q4_k* b, int il, thread float* o) {
    const int s = il / 2, l0 = 16 * (il % 2);
    int sc, m;
    scale_min_k4(s, b->scales, sc, m);
    const float d1 = float(b->d) * float(sc), m1 = float(b->dmin) * float(m);
    device const uchar* q = b->qs + 32 * (s / 2) + l0;
    const int sh = 4 * (s & 1);
    #pragma unroll
    for (int i = 0; i < 16; ++i) o[i] = d1 * float((q[i] >> sh) & 15) - m1;
}

static inline void deq16(device const block_q5_k* b, int il, thread float* o) {
    const int s = il / 2, l0 = 16 * (il % 2);
    int sc, m;
    scale_min_k4(s, b->scales, sc, m);
    const float d1 = float(b->d) * float(sc), m1 = float(b->dmin) * float(m);
    device const uchar* q = b->qs + 32 * (s / 2) + l0;
    device const uchar* qh = b->qh + l0;
    const int sh = 4 * (s & 1);
    const uchar bit = uchar(1 << s);
    #pragma unroll
    for (int i = 0; i < 16; ++i) {
        const int code = int((q[i] >> sh) & 15) + ((qh[i] & bit) ? 16 : 0);
        o[i] = d1 * float(code) - m1;
    }
}

static inline void deq16(device const block_q6_k* b, int il, thread float* o) {
    const int h = il / 8, k = (il / 2) % 4, l0 = 16 * (il % 2);
    const float dl = float(b->d) * float(b->scales[il]);
    device const uchar* ql = b->ql + 64 * h + 32 * (k & 1) + l0;
    device const uchar* qh = b->qh + 32 * h + l0;
    const int sh = k >= 2 ? 4 : 0;
    #pragma unroll
    for (int i = 0; i < 16; ++i) {
        const int code = int((ql[i] >> sh) & 15) | int((qh[i] >> (2 * k)) & 3) << 4;
        o[i] = dl * float(code - 32);
    }
}

// load16 for quantized rows: e0 is a multiple of 16 and below k.
template <typename B>
static inline void load16(device const B* row, int e0, int k, thread float* o) {
    deq16(row + e0 / B::QK, (e0 % B::QK) / 16, o);
}

static inline void load16(device const w_f32* row, int e0, int k, thread float* o) {
    device const float* p = (device const float*)row + e0;
    if (e0 + 16 <= k) {
        #pragma unroll
        for (int i = 0; i < 16; ++i) o[i] = p[i];
    } else {
        #pragma unroll
        for (int i = 0; i < 16; ++i) o[i] = e0 + i < k ? p[i] : 0.0f;
    }
}

static inline void load16(device const w_f16* row, int e0, int k, thread float* o) {
    device const half* p = (device const half*)row + e0;
    if (e0 + 16 <= k) {
        #pragma unroll
        for (int i = 0; i < 16; ++i) o[i] = float(p[i]);
    } else {
        #pragma unroll
        for (int i = 0; i < 16; ++i) o[i] = e0 + i < k ? float(p[i]) : 0.0f;
    }
}

static inline void load16(device const w_bf16* row, int e0, int k, thread float* o) {
    device const ushort* p = (device const ushort*)row + e0;
    if (e0 + 16 <= k) {
        #pragma unroll
        for (int i = 0; i < 16; ++i) o[i] = bf16_to_float(p[i]);
    } else {
        #pragma unroll
        for (int i = 0; i < 16; ++i) o[i] = e0 + i < k ? bf16_to_float(p[i]) : 0.0f;
    }
}

// row_bytes is the size of one row of k elements of B.
template <typename B>
static inline ulong row_bytes(int k) { return ulong(k / B::QK) * sizeof(B); }

// Repacked q8_0 and q4_0 rows (issue #34): the layout a host may upload
// those weights in (shaders/repack.go, Tuning.Repack; the CUDA host does).
// A row of k elements is its k/32 block scales (f16), zero-padded to a
// multiple of 16 bytes, then its quants block after block (q8_0: 32 bytes,
// q4_0: 16 bytes of nibbles in the file's order), so rows start 16-byte
// aligned and each 16-element chunk's quants are one aligned 16-byte load,
// where the file's 34- and 18-byte blocks allow 2-byte loads only. The
// marker structs are never dereferenced: row pointers are cast to bytes.
struct rp_q8_0 { uchar b; enum { QK = 32 }; };
struct rp_q4_0 { uchar b; enum { QK = 32 }; };

static inline int rp_scale_bytes(int k) { return ((k / 32) * 2 + 15) & ~15; }

template <>
inline ulong row_bytes<rp_q8_0>(int k) { return ulong(rp_scale_bytes(k) + k); }
template <>
inline ulong row_bytes<rp_q4_0>(int k) { return ulong(rp_scale_bytes(k) + k / 2); }

// rp_q8_word decodes the four int8 quants of v (little-endian) times d.
static inline __attribute__((always_inline)) void rp_q8_word(uint v, float d, thread float* o) {
    o[0] = float(int(v << 24) >> 24) * d;
    o[1] = float(int(v << 16) >> 24) * d;
    o[2] = float(int(v << 8) >> 24) * d;
    o[3] = float(int(v) >> 24) * d;
}

// rp_q4_word decodes the low nibbles of v's four bytes, minus 8, times d.
static inline __attribute__((always_inline)) void rp_q4_word(uint v, float d, thread float* o) {
    o[0] = float(int(v & 15u) - 8) * d;
    o[1] = float(int((v >> 8) & 15u) - 8) * d;
    o[2] = float(int((v >> 16) & 15u) - 8) * d;
    o[3] = float(int((v >> 24) & 15u) - 8) * d;
}

// load16 for repacked rows: e0 is a multiple of 16 and below k.
static inline __attribute__((always_inline)) void load16(device const rp_q8_0* row, int e0, int k, thread float* o) {
    device const uchar* r = (device const uchar*)row;
    const float d = float(((device const half*)r)[e0 / 32]);
    const uint4 q = *(device const uint4*)(r + rp_scale_bytes(k) + e0);
    rp_q8_word(q.x, d, o);
    rp_q8_word(q.y, d, o + 4);
    rp_q8_word(q.z, d, o + 8);
    rp_q8_word(q.w, d, o + 12);
}

static inline __attribute__((always_inline)) void load16(device const rp_q4_0* row, int e0, int k, thread float* o) {
    device const uchar* r = (device const uchar*)row;
    const float d = float(((device const half*)r)[e0 / 32]);
    const uint4 q = *(device const uint4*)(r + rp_scale_bytes(k) + 16 * (e0 / 32));
    const uint sh = 4u * uint((e0 % 32) / 16);
    rp_q4_word(q.x >> sh, d, o);
    rp_q4_word(q.y >> sh, d, o + 4);
    rp_q4_word(q.z >> sh, d, o + 8);
    rp_q4_word(q.w >> sh, d, o + 12);
}

// f16 rows the host promises 16-byte aligned (Tuning.Align16, issue #34):
// a row of k elements (k a multiple of 16) at a 16-byte aligned binding,
// so a 16-element chunk is two aligned 16-byte loads, where w_f16 (element
// alignment only) loads 16 single halves. The bytes are the file's; the
// launch rule picks the "_a16" instances only where the promise holds.
struct a16_f16 { half v; enum { QK = 1 }; };

// a16_word converts the two halves of v (little-endian) to floats.
static inline __attribute__((always_inline)) void a16_word(uint v, thread float* o) {
    const float2 f = float2(as_type<half2>(v));
    o[0] = f.x;
    o[1] = f.y;
}

// load16 for aligned f16 rows: e0 is a multiple of 16 and e0+16 <= k.
static inline __attribute__((always_inline)) void load16(device const a16_f16* row, int e0, int k, thread float* o) {
    device const uint4* p = (device const uint4*)((device const half*)row + e0);
    const uint4 a = p[0];
    const uint4 b = p[1];
    a16_word(a.x, o);
    a16_word(a.y, o + 2);
    a16_word(a.z, o + 4);
    a16_word(a.w, o + 6);
    a16_word(b.x, o + 8);
    a16_word(b.y, o + 10);
    a16_word(b.z, o + 12);
    a16_word(b.w, o + 14);
}

// ---------------------------------------------------------------------------
// Tiled product core shared by mat_mul (matmul.metal) and conv1d
// (conv1d.metal): C[m, n] = X[m, k]·W[n, k]ᵀ for one MM_BM×MM_BN output tile,
// with simdgroup_float8x8 multiply-accumulate. A threadgroup is 4
// SIMD-groups (128 threads); SIMD-group s owns the 16×32 sub-tile at
// m offset 16*(s/2), n offset 32*(s%2) (2×4 8x8 accumulators). Per k step of
// MM_BK, every thread dequantises one 16-element chunk of a weight row into
// threadgroup memory (stored k-major, so it loads as the right operand
// without a transpose) and copies 8 activations; rows past n or m and
// columns past k are zero, so any n, m and k work.
// ---------------------------------------------------------------------------
#define MM_BM 32
#define MM_BN 64
#define MM_BK 32
#define MM_THREADS 128

// mm_shape describes the left operand: a plain matrix (x[row*ldx + kk]) or,
// for conv1d, the im2col view of the input (row = output step, kk = ci*kw + j).
struct mm_shape {
    int n, k, m, ldx;
    int conv, cin, T, kw, stride, pad, chanmaj;
};

static inline float mm_x(device const float* x, thread const mm_shape& s, int row, int kk) {
    if (s.conv == 0) return x[row * s.ldx + kk];
    const int ci = kk / s.kw, j = kk - ci * s.kw;
    const int t = row * s.stride + j - s.pad;
    if (t < 0 || t >= s.T) return 0.0f;
    return s.chanmaj != 0 ? x[ci * s.ldx + t] : x[t * s.ldx + ci];
}

// mm_core leaves the tile's results in stage[mm*MM_BN + nn] (MM_BM×MM_BN
// floats, which may be sw) for threads to store after it returns.
// sw: MM_BK*MM_BN floats, sx: MM_BM*MM_BK floats.
template <typename B>
static inline void mm_core(device const uchar* W, device const float* x, thread const mm_shape& s,
                           int n0, int m0, threadgroup float* sw, threadgroup float* sx,
                           uint tiitg, uint sgitg) {
    const ulong rb = row_bytes<B>(s.k);
    const int moff = 16 * int(sgitg / 2), noff = 32 * int(sgitg % 2);
    simdgroup_float8x8 c[2][4];
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 4; ++j) c[i][j] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);

    // this thread's weight chunk and activation run
    const int wn = int(tiitg) / 2, wh = int(tiitg) % 2;
    const int xm = int(tiitg) / 4, xq = int(tiitg) % 4;
    const bool wok = n0 + wn < s.n, xok = m0 + xm < s.m;
    device const B* wrow = (device const B*)(W + ulong(wok ? n0 + wn : 0) * rb);

    for (int k0 = 0; k0 < s.k; k0 += MM_BK) {
        threadgroup_barrier(mem_flags::mem_threadgroup); // previous step's reads are done
        float v[16];
        const int e0 = k0 + 16 * wh;
        if (wok && e0 < s.k) {
            load16(wrow, e0, s.k, v);
        } else {
            #pragma unroll
            for (int i = 0; i < 16; ++i) v[i] = 0.0f;
        }
        for (int i = 0; i < 16; ++i) sw[(16 * wh + i) * MM_BN + wn] = v[i];
        for (int i = 0; i < 8; ++i) {
            const int kk = k0 + 8 * xq + i;
            sx[xm * MM_BK + 8 * xq + i] = (xok && kk < s.k) ? mm_x(x, s, m0 + xm, kk) : 0.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (int kk = 0; kk < MM_BK; kk += 8) {
            simdgroup_float8x8 a[2], b[4];
            for (int i = 0; i < 2; ++i) simdgroup_load(a[i], sx + (moff + 8 * i) * MM_BK + kk, MM_BK);
            for (int j = 0; j < 4; ++j) simdgroup_load(b[j], sw + kk * MM_BN + noff + 8 * j, MM_BN);
            for (int i = 0; i < 2; ++i)
                for (int j = 0; j < 4; ++j) simdgroup_multiply_accumulate(c[i][j], a[i], b[j], c[i][j]);
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    threadgroup float* stage = sw;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 4; ++j)
            simdgroup_store(c[i][j], stage + (moff + 8 * i) * MM_BN + noff + 8 * j, MM_BN);
    threadgroup_barrier(mem_flags::mem_threadgroup);
}
// ===================== end of ggml blocks section ==========================

// group_device_fence orders this thread's device memory accesses before
// and after it for every thread of the launch (the ticket's release and
// acquire). Metal has the device-scope fence from MSL 3.2; before it,
// a device barrier is the closest there is (not validated: no Mac here).
static inline void group_device_fence() {
#if defined(__METAL_VERSION__) && __METAL_VERSION__ < 320
    threadgroup_barrier(mem_flags::mem_device);
#elif defined(__METAL_VERSION__)
    atomic_thread_fence(mem_flags::mem_device, memory_order_acq_rel, thread_scope_device);
#else
    atomic_thread_fence(mem_flags::mem_device, memory_order_acq_rel);
#endif
}

// group_ticket: whether this threadgroup is the last of G to get here,
// counting in *scr (zero before the first; sample's is zeroed by
// sample_scale, attention_ticket's word resets itself); every earlier device
// write of the G is then visible to that group. Every thread fences (its
// own writes released), thread 0 takes the ticket, and in the last group
// every thread fences again before it reads the others' partials.
static inline bool group_ticket(device uint* scr, uint G, threadgroup uint* verdict, uint tid) {
    group_device_fence();
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tid == 0) {
        const uint t = atomic_fetch_add_explicit((device atomic_uint*)scr, 1u, memory_order_relaxed);
        *verdict = t == G - 1 ? 1u : 0u;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const bool last = *verdict != 0;
    if (last) {
        group_device_fence();
    }
    return last;
}
