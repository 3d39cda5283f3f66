// mvbench.cu: issue #38 round 5 (b38s29) microbenchmark kernels, compiled by
// NVRTC through CuPy (mvbench.py). The 16-row step's q8_0 products (repacked
// layout: per weight row the f16 scales padded to 16 bytes, then k int8 codes)
// in three forms:
//   rows<MB>: a replica of cuda/native/mat_vec_rows.cu's body (two weight rows
//     a warp, 4 warps a block, MB activation rows a block; no Params prologue).
//   mma<KW,NT>: tensor cores, one m16n8k16 product covers the 16 activation
//     rows: a warp takes NT tiles of 8 weight rows, the block's KW warps split
//     the q8_0 blocks (32 wide) of k between them and sum in shared memory.
//     The k order inside a 32-block is permuted (both operands alike) so that
//     a lane reads 8 contiguous weight bytes and two float4 of each of its
//     two activation rows; activations enter as f16 hi + lo (22 bits), the
//     q8 codes exactly (prmt/sub), the block scale in f32 after the 4 mmas.
//   empty: the launch floor.
typedef unsigned short h16;
struct __attribute__((aligned(16))) F4 { float x, y, z, w; };
struct __attribute__((aligned(8))) U2 { unsigned x, y; };

__device__ inline int rpScaleBytes(int k) { return ((k / 32) * 2 + 15) & ~15; }
__device__ inline float h2f(h16 h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ inline unsigned cvt2(float a, float b) { unsigned r; asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(b), "f"(a)); return r; }
__device__ inline void split2(float a, float b, unsigned* hi, unsigned* lo) {
    const unsigned h = cvt2(a, b);
    *hi = h;
    *lo = cvt2(a - h2f((h16)h), b - h2f((h16)(h >> 16)));
}
__device__ inline unsigned i8pair(unsigned v) {
    unsigned r;
    asm("prmt.b32 %0, %1, %2, 0x4140;" : "=r"(r) : "r"(v ^ 0x8080u), "r"(0x64646464u));
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(r), "r"(0x64806480u));
    return r;
}
__device__ inline void mma16816(float* c, const unsigned* a, unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// ---- replica of mat_vec_rows (rp8) ----
__device__ inline void q8(unsigned v, float d, float* o) {
    o[0] = (float)((int)(v << 24) >> 24) * d;
    o[1] = (float)((int)(v << 16) >> 24) * d;
    o[2] = (float)((int)(v << 8) >> 24) * d;
    o[3] = (float)((int)v >> 24) * d;
}
__device__ inline void rpload(const unsigned char* r, int c, int k, float* o) {
    const float d = h2f(((const h16*)r)[c / 2]);
    const F4 qf = *(const F4*)(r + rpScaleBytes(k) + 16 * c);
    const unsigned* q = (const unsigned*)&qf;
    q8(q[0], d, o); q8(q[1], d, o + 4); q8(q[2], d, o + 8); q8(q[3], d, o + 12);
}
__device__ inline float dot16(const float* w, const float* x) {
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < 16; i++) s += w[i] * x[i];
    return s;
}
__device__ inline void x16(const float* xr, int c, float* o) {
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const F4 v = *(const F4*)(xr + 16 * c + 4 * j);
        o[4 * j] = v.x, o[4 * j + 1] = v.y, o[4 * j + 2] = v.z, o[4 * j + 3] = v.w;
    }
}
__device__ inline float warpSum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
template <int MB>
__device__ void rows(const unsigned char* Wb, const float* x, float* out, int n, int k, int m, int ldx, int ldo) {
    const int t = threadIdx.x, warp = t / 32, lane = t % 32;
    const int row0 = (blockIdx.x * 4 + warp) * 2;
    const int b0 = blockIdx.y * MB, mb = m - b0 < MB ? m - b0 : MB;
    if (row0 >= n || mb <= 0) return;
    const unsigned long rb = (unsigned long)(rpScaleBytes(k) + k);
    const unsigned char* w0 = Wb + (unsigned long)row0 * rb;
    const unsigned char* w1 = Wb + (unsigned long)(row0 + 1 < n ? row0 + 1 : n - 1) * rb;
    const float* xr = x + (long)b0 * ldx;
    const int nc = k / 16;
    float acc0[MB], acc1[MB];
#pragma unroll
    for (int b = 0; b < MB; b++) acc0[b] = 0.0f, acc1[b] = 0.0f;
    for (int c = lane; c < nc; c += 64) {
        const bool two = c + 32 < nc;
        const int c2 = two ? c + 32 : c;
        float a0[16], a1[16], e0[16], e1[16];
        rpload(w0, c, k, a0); rpload(w1, c, k, a1); rpload(w0, c2, k, e0); rpload(w1, c2, k, e1);
#pragma unroll
        for (int b = 0; b < MB; b++) {
            if (b < mb) {
                float xa[16], xb[16];
                x16(xr + (long)b * ldx, c, xa);
                x16(xr + (long)b * ldx, c2, xb);
                const float ta0 = dot16(a0, xa), ta1 = dot16(a1, xa);
                const float tb0 = dot16(e0, xb), tb1 = dot16(e1, xb);
                acc0[b] += two ? ta0 + tb0 : ta0;
                acc1[b] += two ? ta1 + tb1 : ta1;
            }
        }
    }
#pragma unroll
    for (int b = 0; b < MB; b++) {
        if (b < mb) {
            const float s0 = warpSum(acc0[b]), s1 = warpSum(acc1[b]);
            if (lane == 0) {
                out[(long)(b0 + b) * ldo + row0] = s0;
                if (row0 + 1 < n) out[(long)(b0 + b) * ldo + row0 + 1] = s1;
            }
        }
    }
}

// ---- tensor-core form ----
template <int KW, int NT>
__device__ void mmaRows(const unsigned char* W, const float* x, float* out, int n, int k, int m, int ldx, int ldo) {
    __shared__ float red[KW > 1 ? KW - 1 : 1][NT * 4][32];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, q = lane & 3;
    const int tile0 = blockIdx.x * 8 * NT;
    const int sb = rpScaleBytes(k);
    const unsigned long rb = (unsigned long)(sb + k);
    const int nb = k / 32;
    const int r0 = g < m ? g : m - 1, r1 = g + 8 < m ? g + 8 : m - 1;
    const float* x0 = x + (long)r0 * ldx + 8 * q;
    const float* x1 = x + (long)r1 * ldx + 8 * q;
    const unsigned char* wr[NT];
    const h16* s0[NT];
    const h16* s1[NT];
#pragma unroll
    for (int t = 0; t < NT; t++) {
        const int rw = tile0 + 8 * t + g, ra = tile0 + 8 * t + 2 * q, rc = ra + 1;
        wr[t] = W + (unsigned long)(rw < n ? rw : n - 1) * rb + sb + 8 * q;
        s0[t] = (const h16*)(W + (unsigned long)(ra < n ? ra : n - 1) * rb);
        s1[t] = (const h16*)(W + (unsigned long)(rc < n ? rc : n - 1) * rb);
    }
    float acc[NT][4];
#pragma unroll
    for (int t = 0; t < NT; t++) acc[t][0] = acc[t][1] = acc[t][2] = acc[t][3] = 0.0f;
#pragma unroll 2
    for (int blk = warp; blk < nb; blk += KW) {
        const int kb = blk * 32;
        const F4 xa0 = *(const F4*)(x0 + kb), xa1 = *(const F4*)(x0 + kb + 4);
        const F4 xb0 = *(const F4*)(x1 + kb), xb1 = *(const F4*)(x1 + kb + 4);
        unsigned h0[4], l0[4], h1[4], l1[4];
        split2(xa0.x, xa0.y, &h0[0], &l0[0]); split2(xb0.x, xb0.y, &h0[1], &l0[1]);
        split2(xa0.z, xa0.w, &h0[2], &l0[2]); split2(xb0.z, xb0.w, &h0[3], &l0[3]);
        split2(xa1.x, xa1.y, &h1[0], &l1[0]); split2(xb1.x, xb1.y, &h1[1], &l1[1]);
        split2(xa1.z, xa1.w, &h1[2], &l1[2]); split2(xb1.z, xb1.w, &h1[3], &l1[3]);
#pragma unroll
        for (int t = 0; t < NT; t++) {
            const U2 w = *(const U2*)(wr[t] + kb);
            const float d0 = h2f(s0[t][blk]), d1 = h2f(s1[t][blk]);
            float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            const unsigned b00 = i8pair(w.x), b01 = i8pair(w.x >> 16), b10 = i8pair(w.y), b11 = i8pair(w.y >> 16);
            mma16816(c, h0, b00, b01);
            mma16816(c, l0, b00, b01);
            mma16816(c, h1, b10, b11);
            mma16816(c, l1, b10, b11);
            acc[t][0] += c[0] * d0; acc[t][1] += c[1] * d1;
            acc[t][2] += c[2] * d0; acc[t][3] += c[3] * d1;
        }
    }
    if (KW > 1) {
        if (warp > 0) {
#pragma unroll
            for (int t = 0; t < NT; t++)
#pragma unroll
                for (int i = 0; i < 4; i++) red[warp - 1][4 * t + i][lane] = acc[t][i];
        }
        __syncthreads();
        if (warp > 0) return;
#pragma unroll
        for (int w = 0; w < KW - 1; w++)
#pragma unroll
            for (int t = 0; t < NT; t++)
#pragma unroll
                for (int i = 0; i < 4; i++) acc[t][i] += red[w][4 * t + i][lane];
    }
#pragma unroll
    for (int t = 0; t < NT; t++) {
        const int col = tile0 + 8 * t + 2 * q;
        if (g < m) {
            if (col < n) out[(long)g * ldo + col] = acc[t][0];
            if (col + 1 < n) out[(long)g * ldo + col + 1] = acc[t][1];
        }
        if (g + 8 < m) {
            if (col < n) out[(long)(g + 8) * ldo + col] = acc[t][2];
            if (col + 1 < n) out[(long)(g + 8) * ldo + col + 1] = acc[t][3];
        }
    }
}

#define ARGS const unsigned char* W, const float* x, float* out, int n, int k, int m, int ldx, int ldo
#define PASS W, x, out, n, k, m, ldx, ldo
extern "C" __global__ void __launch_bounds__(128) rows4(ARGS) { rows<4>(PASS); }
extern "C" __global__ void __launch_bounds__(128) rows8(ARGS) { rows<8>(PASS); }
extern "C" __global__ void __launch_bounds__(128) rows16(ARGS) { rows<16>(PASS); }
extern "C" __global__ void __launch_bounds__(128) mma_k4n1(ARGS) { mmaRows<4, 1>(PASS); }
extern "C" __global__ void __launch_bounds__(128) mma_k4n2(ARGS) { mmaRows<4, 2>(PASS); }
extern "C" __global__ void __launch_bounds__(64) mma_k2n4(ARGS) { mmaRows<2, 4>(PASS); }
extern "C" __global__ void __launch_bounds__(256) mma_k8n1(ARGS) { mmaRows<8, 1>(PASS); }
extern "C" __global__ void __launch_bounds__(32) mma_k1n2(ARGS) { mmaRows<1, 2>(PASS); }
extern "C" __global__ void empty(ARGS) {}
