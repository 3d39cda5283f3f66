// attention_mma_tc: flash attention (attention.metal's attention_mma) on
// tensor cores, native CUDA for the sm_80 module. It covers what
// attention_mma covers, rows of one sequence with no split: the Whisper
// encoder's non-causal self-attention and cross-attention (f32 K/V) and
// causal prefill over the f16 KV cache (GQA, sliding window), head sizes
// that are multiples of 8 up to 64 (_f32, _f16) or 128 (_hd128_f32,
// _hd128_f16); no probs (the launch rule keeps attention_mma when they are
// bound).
//
// Blocking: each warp owns 16 query rows (mma's m), a block of NW warps 16·NW
// consecutive rows of one head (grid (1, nHead, ceil(m / 16·NW))). Keys go
// in 32-key tiles from the first tile any row of the block sees, K and V
// staged in shared memory (V transposed, so P·V's B fragments are pairs of
// keys) and shared by the warps: per tile S = Q·Kᵀ (16 × 32, four n8
// products per 16-wide slice of the head), the online softmax of each row
// on the accumulators (a row's 32 scores are spread over the 4 lanes of a
// quad: max and sum by two shuffles), then O = diag(corr)·O + P·V with P
// taken straight from S's accumulators as the A fragments. Per row this is
// attention_mma's sequence: the same 32-key tiles from the same first
// tile, the max updated and the accumulator rescaled once a tile; rows are
// independent, so grouping 16·NW of them per block (attention_mma: 16)
// changes no row's arithmetic, only the products' summation order inside
// a tile.
//
// Exactness: Q, P and f32 K/V are split into f16 hi + lo parts (mma.h,
// split2) and the products hi·hi + hi·lo + lo·hi taken (lo·lo, below
// 2^-22 relative, dropped); f16 K/V enter exactly, so Q·Kᵀ and P·V take
// two products. Each product is the float one to about 2^-21 of Σ|a·b|.
// exp is the header's correctly rounded metal::exp, as in the translated kernel.
//
// Bindings: 0 q, 1 K, 2 V, 3 out. Args words: attention_args (kargs.h):
// 0 head_dim, 1 n_head, 2 nkv, 3 m, 4 ldq, 5 ldo, 6 kv_len, 7 pos0,
// 8 flags, 9 scale, 10 head_stride, 11 pos_stride, 14 window.
#include "mma.h"
#include "kargs.h"

namespace attn {

using mma::h16;
constexpr int NW = 2, ROWS = 16 * NW, THREADS = 32 * NW, KT = 32;
constexpr int LDV = KT + 8; // V tile (dim-major) row stride in halves

// visible is the keys row t sees (end, exclusive), first its first key.
__device__ inline int visible(const unsigned* a, int t) {
    const int kvLen = (int)a[6], qpos = (int)a[7] + t;
    return (a[8] & KFLAG_CAUSAL) != 0 ? metal::min(kvLen, qpos + 1) : kvLen;
}
__device__ inline int first(const unsigned* a, int t) {
    const int w = (int)a[14], qpos = (int)a[7] + t;
    return (w == 0 || qpos + 1 <= w) ? 0 : qpos + 1 - w;
}

// quad reductions over the 4 lanes holding one row's scores
__device__ inline float quadMax(float v) {
    v = __builtin_fmaxf(v, __nvvm_shfl_sync_bfly_f32(0xffffffffu, v, 1, 0x1f));
    return __builtin_fmaxf(v, __nvvm_shfl_sync_bfly_f32(0xffffffffu, v, 2, 0x1f));
}
__device__ inline float quadSum(float v) {
    v += __nvvm_shfl_sync_bfly_f32(0xffffffffu, v, 1, 0x1f);
    return v + __nvvm_shfl_sync_bfly_f32(0xffffffffu, v, 2, 0x1f);
}

// kv<T>::put turns a K/V element into its f16 part(s) for the tiles.
template <class T> struct kv;
template <> struct kv<float> {
    static constexpr bool split = true;
    __device__ static void put(float x, h16* hi, h16* lo) {
        *hi = mma::f2h(x);
        *lo = mma::f2h(x - mma::h2f(*hi));
    }
};
template <> struct kv<h16> {
    static constexpr bool split = false;
    __device__ static void put(h16 x, h16* hi, h16*) { *hi = x; }
};

// always_inline: as mat_mul_mma.cu's mat_mul (no local copy of the parameter).
template <class T, int HD>
__device__ __attribute__((always_inline)) inline void attention(const __hark::Params& P) {
    constexpr bool SPLIT = kv<T>::split;
    constexpr int LDK = HD + 8; // K tile (key-major) row stride in halves
    constexpr int PER = KT * HD / THREADS, BATCH = 16; // tile elements a thread loads, per batch
    __shared__ __attribute__((aligned(16))) unsigned __hark_args[20];
    __shared__ __attribute__((aligned(16))) h16 sKh[KT * LDK];
    __shared__ __attribute__((aligned(16))) h16 sKl[SPLIT ? KT * LDK : 2];
    __shared__ __attribute__((aligned(16))) h16 sVh[HD * LDV];
    __shared__ __attribute__((aligned(16))) h16 sVl[SPLIT ? HD * LDV : 2];
    void* bufs[16];
    __hark::patch(P, bufs, __hark_args);
    const __hark::Ids ids = __hark::ids(P);
    const unsigned* a = __hark_args;
    const int hd = (int)a[0], nHead = (int)a[1], nKV = (int)a[2], m = (int)a[3], ldq = (int)a[4], ldo = (int)a[5];
    const float scale = __builtin_bit_cast(float, a[9]);
    const unsigned long ps = a[11];
    const float* q = (const float*)bufs[0];
    const T* K = (const T*)bufs[1];
    const T* V = (const T*)bufs[2];
    float* out = (float*)bufs[3];
    const int h = (int)ids.group[1], t0 = (int)ids.group[2] * ROWS;
    const int tid = (int)ids.linear, warp = tid / 32, lane = tid % 32, g = lane / 4, qd = lane % 4;
    const int tw = t0 + 16 * warp;                  // this warp's first row
    const int nks = (hd + 15) / 16, nn = hd / 8;   // k slices of Q·Kᵀ, n8 tiles of P·V
    const unsigned long base = (unsigned long)(h / (nHead / nKV)) * a[10];
    const int jEnd = visible(a, metal::min(t0 + ROWS, m) - 1);
    const int jRows = tw < m ? visible(a, metal::min(tw + 16, m) - 1) : 0; // keys this warp's rows see

    // rows g and g+8 of the warp: visible keys [f, nv)
    int nv[2], f[2];
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const int t = tw + g + 8 * i;
        nv[i] = t < m ? visible(a, t) : 0;
        f[i] = t < m ? first(a, t) : 0;
    }
    // Q fragments (hi, lo) for every 16-wide slice, zero past hd and m
    unsigned qh[HD / 16][4], ql[HD / 16][4];
#pragma unroll
    for (int s = 0; s < HD / 16; s++)
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int row = tw + g + 8 * (r % 2), col = 16 * s + 2 * qd + 8 * (r / 2);
            const float* qp = q + (long)row * ldq + (long)h * hd + col;
            const bool ok = s < nks && row < m && col < hd; // hd % 8 == 0: col+1 < hd too
            mma::split2(ok ? qp[0] : 0.0f, ok ? qp[1] : 0.0f, &qh[s][r], &ql[s][r]);
        }
    float o[HD / 8][4], M[2] = {-INFINITY, -INFINITY}, L[2] = {0.0f, 0.0f};
#pragma unroll
    for (int n = 0; n < HD / 8; n++)
#pragma unroll
        for (int i = 0; i < 4; i++) o[n][i] = 0.0f;

    for (int jb = first(a, t0) & ~(KT - 1); jb < jEnd; jb += KT) {
        const int nk = metal::min(KT, jEnd - jb);
        asm volatile("bar.sync 0;" ::: "memory"); // the previous tile's reads are done
        // the tile's KT × HD elements (zero past hd and the visible keys:
        // products must not meet garbage), BATCH a thread at a time with
        // compile-time indices, so a batch's loads are all in flight
        // before the first store
#pragma unroll
        for (int b0 = 0; b0 < PER; b0 += BATCH) {
            T kx[BATCH], vx[BATCH];
#pragma unroll
            for (int i = 0; i < BATCH; i++) {
                const int e = tid + (b0 + i) * THREADS, key = e / HD, d = e % HD;
                const bool ok = key < nk && d < hd;
                const long src = (long)base + (long)(jb + key) * (long)ps + d;
                kx[i] = ok ? K[src] : (T)0;
                vx[i] = ok ? V[src] : (T)0;
            }
#pragma unroll
            for (int i = 0; i < BATCH; i++) {
                const int e = tid + (b0 + i) * THREADS, key = e / HD, d = e % HD;
                h16 kh, kl, vh, vl;
                kv<T>::put(kx[i], &kh, &kl);
                kv<T>::put(vx[i], &vh, &vl);
                sKh[key * LDK + d] = kh;
                sVh[d * LDV + key] = vh;
                if (SPLIT) {
                    sKl[key * LDK + d] = kl;
                    sVl[d * LDV + key] = vl;
                }
            }
        }
        asm volatile("bar.sync 0;" ::: "memory");
        if (tw >= m || jb >= jRows) continue;

        // S = Q·Kᵀ: 16 rows × 32 keys, n8 tile j is keys 8j..8j+7
        float s[4][4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
#pragma unroll
            for (int i = 0; i < 4; i++) s[j][i] = 0.0f;
#pragma unroll
            for (int ks = 0; ks < HD / 16; ks++) {
                if (ks < nks) { // constant trip counts, conditions inside: Q stays in registers
                    const int kr = 8 * j + g, c0 = 16 * ks + 2 * qd;
                    const unsigned b0 = mma::word(sKh, LDK, kr, c0), b1 = mma::word(sKh, LDK, kr, c0 + 8);
                    if (SPLIT) mma::mma16816(s[j], qh[ks], mma::word(sKl, LDK, kr, c0), mma::word(sKl, LDK, kr, c0 + 8));
                    mma::mma16816(s[j], ql[ks], b0, b1);
                    mma::mma16816(s[j], qh[ks], b0, b1);
                }
            }
        }
        // online softmax of rows g (i = 0: s[j][0..1]) and g+8 (i = 1: s[j][2..3])
        float cr[2] = {1.0f, 1.0f};
#pragma unroll
        for (int i = 0; i < 2; i++) {
            float mb = -INFINITY;
#pragma unroll
            for (int j = 0; j < 4; j++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const int key = jb + 8 * j + 2 * qd + e;
                    const float sv = s[j][2 * i + e] * scale;
                    s[j][2 * i + e] = sv;
                    if (key >= f[i] && key < nv[i]) mb = __builtin_fmaxf(mb, sv);
                }
            mb = quadMax(mb);
            if (mb == -INFINITY) { // nothing visible in this tile
#pragma unroll
                for (int j = 0; j < 4; j++) s[j][2 * i] = s[j][2 * i + 1] = 0.0f;
                continue;
            }
            const float nm = __builtin_fmaxf(M[i], mb);
            const float corr = M[i] == -INFINITY ? 0.0f : metal::exp(M[i] - nm);
            float sum = 0.0f;
#pragma unroll
            for (int j = 0; j < 4; j++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const int key = jb + 8 * j + 2 * qd + e;
                    const float p = key >= f[i] && key < nv[i] ? metal::exp(s[j][2 * i + e] - nm) : 0.0f;
                    s[j][2 * i + e] = p;
                    sum += p;
                }
            L[i] = L[i] * corr + sum; // this lane's part of the row sum
            M[i] = nm;
            cr[i] = corr;
        }
        // O = diag(corr)·O, outside the row loop so O keeps constant
        // indices (registers, not local memory)
#pragma unroll
        for (int n = 0; n < HD / 8; n++) o[n][0] *= cr[0], o[n][1] *= cr[0], o[n][2] *= cr[1], o[n][3] *= cr[1];
        // O += P·V: P's A fragments are S's accumulators, keys 16kk..16kk+15
#pragma unroll
        for (int kk = 0; kk < 2; kk++) {
            unsigned ph[4], pl[4];
            mma::split2(s[2 * kk][0], s[2 * kk][1], &ph[0], &pl[0]);
            mma::split2(s[2 * kk][2], s[2 * kk][3], &ph[1], &pl[1]);
            mma::split2(s[2 * kk + 1][0], s[2 * kk + 1][1], &ph[2], &pl[2]);
            mma::split2(s[2 * kk + 1][2], s[2 * kk + 1][3], &ph[3], &pl[3]);
#pragma unroll
            for (int n = 0; n < HD / 8; n++) {
                if (n < nn) {
                    const int dr = 8 * n + g, c0 = 16 * kk + 2 * qd;
                    const unsigned b0 = mma::word(sVh, LDV, dr, c0), b1 = mma::word(sVh, LDV, dr, c0 + 8);
                    if (SPLIT) mma::mma16816(o[n], ph, mma::word(sVl, LDV, dr, c0), mma::word(sVl, LDV, dr, c0 + 8));
                    mma::mma16816(o[n], pl, b0, b1);
                    mma::mma16816(o[n], ph, b0, b1);
                }
            }
        }
    }
    if (tw >= m) return;
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const float l = quadSum(L[i]);
        const float inv = l > 0.0f ? 1.0f / l : 0.0f; // no visible key: zero output
        const int row = tw + g + 8 * i;
        if (row >= m) continue;
        float* op = out + (long)row * ldo + (long)h * hd;
#pragma unroll
        for (int n = 0; n < HD / 8; n++) {
            if (n < nn) {
                op[8 * n + 2 * qd] = o[n][2 * i] * inv;
                op[8 * n + 2 * qd + 1] = o[n][2 * i + 1] * inv;
            }
        }
    }
}

} // namespace attn

#define HARK_ATTN_ENTRY(name, T, HD) \
    extern "C" __global__ void __attribute__((launch_bounds(attn::THREADS))) hark_##name(const __hark::Params P) { if (__hark::halted(P)) return; attn::attention<T, HD>(P); }
HARK_ATTN_ENTRY(attention_mma_tc_f32, float, 64)
HARK_ATTN_ENTRY(attention_mma_tc_f16, mma::h16, 64)
HARK_ATTN_ENTRY(attention_mma_tc_hd128_f32, float, 128)
HARK_ATTN_ENTRY(attention_mma_tc_hd128_f16, mma::h16, 128)
