// Flash attention (plan.Attention) for decode, prefill, the Whisper encoder
// and cross-attention.
//
// attention_{f32,f16}: one SIMD-group per (query row t, head h, key chunk
// c); a threadgroup holds the SIMD-groups of consecutive query rows of one
// head, so they read the same K/V rows through the cache. Grid:
// (chunks, nHead, ceil(m / simdgroups)). Within a SIMD-group, keys go 32 at
// a time, one key per lane for the score (the whole q·k dot), then an
// online-softmax update, then the values with lanes over the head dims and
// the 32 key weights shared through the SIMD-group's slice of threadgroup
// memory (two simdgroup_barriers per 32 keys rather than 32 shuffles: the
// same on a GPU, far fewer rendezvous in the MSL executor). No
// threadgroup barriers: SIMD-groups of a threadgroup are independent, so
// rows past m simply do nothing.
//
// With one chunk (prefill, encoder: enough rows to fill the GPU) the
// kernel writes the normalised output. With several chunks (decode: split
// over the KV length so a single query still spreads over the GPU) it
// writes each chunk's running max, sum and unnormalised accumulator to
// scratch, and attention_merge combines them.
//
// Rows of one sequence that need no split take attention_mma (head sizes
// multiple of 8 up to 64: simdgroup_matrix products) or attention_tiled
// (K/V tiles in threadgroup memory), both below; the launch rule picks.
//
// probs (bind 4): the scaled score of each visible key is written first;
// whoever knows the final max and sum (the one chunk, or the merge) turns
// it into exp(s−max)/sum, and writes 0 for masked keys j < kvLen. Lane
// j%32 writes and rereads key j, so no other thread touches it in between.

// (enums: integer constants usable as array sizes in MSL and C++ alike)
enum : uint {
    ATTN_MAX_HD = 256,      // 8 accumulators per lane
    ATTN_SCRATCH_HEAD = 4,  // floats before the partials (word 0: chunk count)
};

// attn_chunk_len is the keys per chunk for kvLen keys over nc chunks, a
// multiple of 32 so chunks start at a lane-0 key (the launch rule uses the
// same formula to size scratch).
static inline uint attn_chunk_len(uint kvLen, uint nc) {
    uint c = (kvLen + nc - 1) / nc;
    return (c + 31u) & ~31u;
}

// attn_dot is q·k over hd dims, 4 at a time where hd allows (packed
// vectors: binding offsets only promise element alignment).
static inline float attn_dot(device const float* q, device const float* k, uint hd) {
    float4 a = 0.0f;
    uint i = 0;
    // 64 dims a step, then 16, loads first (as the f16 form below)
    for (; i + 64 <= hd; i += 64) {
        float4 kk[16];
        #pragma unroll
        for (uint u = 0; u < 16; u++) {
            kk[u] = float4(*(device const packed_float4*)(k + i + 4 * u));
        }
        #pragma unroll
        for (uint u = 0; u < 16; u++) {
            a += float4(*(device const packed_float4*)(q + i + 4 * u)) * kk[u];
        }
    }
    for (; i + 16 <= hd; i += 16) {
        const float4 q0 = float4(*(device const packed_float4*)(q + i));
        const float4 q1 = float4(*(device const packed_float4*)(q + i + 4));
        const float4 q2 = float4(*(device const packed_float4*)(q + i + 8));
        const float4 q3 = float4(*(device const packed_float4*)(q + i + 12));
        const float4 k0 = float4(*(device const packed_float4*)(k + i));
        const float4 k1 = float4(*(device const packed_float4*)(k + i + 4));
        const float4 k2 = float4(*(device const packed_float4*)(k + i + 8));
        const float4 k3 = float4(*(device const packed_float4*)(k + i + 12));
        a += q0 * k0;
        a += q1 * k1;
        a += q2 * k2;
        a += q3 * k3;
    }
    for (; i + 4 <= hd; i += 4) {
        a += float4(*(device const packed_float4*)(q + i)) * float4(*(device const packed_float4*)(k + i));
    }
    float d = a.x + a.y + a.z + a.w;
    for (; i < hd; i++) {
        d += q[i] * k[i];
    }
    return d;
}

static inline float attn_dot(device const float* q, device const half* k, uint hd) {
    float4 a = 0.0f;
    uint i = 0;
    // 64 dims a step, then 16, every load before the first product: a step
    // of 4 waited out one load's latency per step (issue #34); the sums are
    // added in the same order
    for (; i + 64 <= hd; i += 64) {
        float4 kk[16];
        #pragma unroll
        for (uint u = 0; u < 16; u++) {
            kk[u] = float4(half4(*(device const packed_half4*)(k + i + 4 * u)));
        }
        #pragma unroll
        for (uint u = 0; u < 16; u++) {
            a += float4(*(device const packed_float4*)(q + i + 4 * u)) * kk[u];
        }
    }
    for (; i + 16 <= hd; i += 16) {
        const float4 q0 = float4(*(device const packed_float4*)(q + i));
        const float4 q1 = float4(*(device const packed_float4*)(q + i + 4));
        const float4 q2 = float4(*(device const packed_float4*)(q + i + 8));
        const float4 q3 = float4(*(device const packed_float4*)(q + i + 12));
        const float4 k0 = float4(half4(*(device const packed_half4*)(k + i)));
        const float4 k1 = float4(half4(*(device const packed_half4*)(k + i + 4)));
        const float4 k2 = float4(half4(*(device const packed_half4*)(k + i + 8)));
        const float4 k3 = float4(half4(*(device const packed_half4*)(k + i + 12)));
        a += q0 * k0;
        a += q1 * k1;
        a += q2 * k2;
        a += q3 * k3;
    }
    for (; i + 4 <= hd; i += 4) {
        a += float4(*(device const packed_float4*)(q + i)) * float4(half4(*(device const packed_half4*)(k + i)));
    }
    float d = a.x + a.y + a.z + a.w;
    for (; i < hd; i++) {
        d += q[i] * float(k[i]);
    }
    return d;
}

// attn_dot_a16 is attn_dot where q and k are 16-byte aligned and hd is a
// multiple of 16 (RopeAttention's "_a16" instances, picked by the launch
// rule under the host's Tuning.Align16 promise): a 64-dim f16 row is 8
// 16-byte loads, not 64 two-byte ones, and q 16 float4 loads, not 64
// floats (on CUDA the packed vectors of attn_dot load element by element;
// issue #33: the one-warp decode chain is its instruction count). The
// products and sums are attn_dot's, in its order: the same bits.
static inline float4 a16_half4(uint lo, uint hi) {
    return float4(float2(as_type<half2>(lo)), float2(as_type<half2>(hi)));
}

static inline float attn_dot_a16(device const float* q, device const half* k, uint hd) {
    float4 a = 0.0f;
    uint i = 0;
    for (; i + 64 <= hd; i += 64) {
        uint4 kw[8];
        #pragma unroll
        for (uint u = 0; u < 8; u++) {
            kw[u] = *(device const uint4*)(k + i + 8 * u);
        }
        #pragma unroll
        for (uint u = 0; u < 8; u++) {
            a += *(device const float4*)(q + i + 8 * u) * a16_half4(kw[u].x, kw[u].y);
            a += *(device const float4*)(q + i + 8 * u + 4) * a16_half4(kw[u].z, kw[u].w);
        }
    }
    for (; i + 16 <= hd; i += 16) {
        const uint4 k0 = *(device const uint4*)(k + i);
        const uint4 k1 = *(device const uint4*)(k + i + 8);
        a += *(device const float4*)(q + i) * a16_half4(k0.x, k0.y);
        a += *(device const float4*)(q + i + 4) * a16_half4(k0.z, k0.w);
        a += *(device const float4*)(q + i + 8) * a16_half4(k1.x, k1.y);
        a += *(device const float4*)(q + i + 12) * a16_half4(k1.z, k1.w);
    }
    return a.x + a.y + a.z + a.w;
}

// The f32 form (attention_ticket_f32_a16: Whisper's cross-attention, 1,500
// f32 keys 1,536 bytes apart): a 64-dim row is 16 aligned float4 loads of k
// and of q, where attn_dot's packed vectors are 64 single floats each on
// CUDA, which ptxas issued in six groups, each waited out (ncu, issue #34:
// 28% of the launch's stall samples). attn_dot's products and sums in its
// order: the same bits.
static inline float attn_dot_a16(device const float* q, device const float* k, uint hd) {
    float4 a = 0.0f;
    uint i = 0;
    for (; i + 64 <= hd; i += 64) {
        float4 kk[16];
        #pragma unroll
        for (uint u = 0; u < 16; u++) {
            kk[u] = *(device const float4*)(k + i + 4 * u);
        }
        #pragma unroll
        for (uint u = 0; u < 16; u++) {
            a += *(device const float4*)(q + i + 4 * u) * kk[u];
        }
    }
    for (; i + 16 <= hd; i += 16) {
        const float4 k0 = *(device const float4*)(k + i);
        const float4 k1 = *(device const float4*)(k + i + 4);
        const float4 k2 = *(device const float4*)(k + i + 8);
        const float4 k3 = *(device const float4*)(k + i + 12);
        a += *(device const float4*)(q + i) * k0;
        a += *(device const float4*)(q + i + 4) * k1;
        a += *(device const float4*)(q + i + 8) * k2;
        a += *(device const float4*)(q + i + 12) * k3;
    }
    return a.x + a.y + a.z + a.w;
}

// attn_visible is the number of keys query row t sees (Attention and
// RopeAttention: the Attend family's fields).
static inline uint attn_visible(constant Args& args, uint t) {
    const uint kvLen = args.attend.kv_len;
    const bool perSeq = (args.attend.flags & KFLAG_PER_SEQ_ROWS) != 0;
    const uint qpos = perSeq ? args.attend.pos0 : args.attend.pos0 + t;
    if ((args.attend.flags & KFLAG_CAUSAL) != 0) {
        return min(kvLen, qpos + 1);
    }
    return kvLen;
}

// attn_first is the first key query row t sees: 0, or the start of its
// sliding window (keys j > qpos - window). RK: a RopeAttention dispatch,
// whose window is its own field.
template <bool RK = false>
static inline uint attn_first(constant Args& args, uint t) {
    const uint w = RK ? args.rope_attention.window : args.attention.window;
    const bool perSeq = (args.attend.flags & KFLAG_PER_SEQ_ROWS) != 0;
    const uint qpos = perSeq ? args.attend.pos0 : args.attend.pos0 + t;
    return (w == 0u || qpos + 1u <= w) ? 0u : qpos + 1u - w;
}

// attn_values adds the weighted value rows of keys [jb, jb+nk) to acc, the
// weights in pw (one per key of the block), NS dims per lane (dim lane+32i
// in slot i). A batch of keys' loads goes out before its first product:
// one key at a time, each load waited out its latency before the next (on
// CUDA 32 round trips a block; issue #34). A batch is 8 keys, 16 in
// decode's RopeAttention with up to 64 dims (RK, NS <= 2: a 32-key block
// in two round trips, not four, issue #33; the rows are held as T until
// their product, so the batch takes no more registers than 8 floats' did),
// and in Attention's with up to 64 dims (issue #34: the cross-attention's
// four 8-key round trips were 22% of its ticket launch's stall samples).
// A slot's dim is clamped into the row, so every load is in bounds without
// a branch; slots past hd sum what is never stored. Each slot adds its keys
// in key order, as before. RK: key kn of the block (the row's new key,
// RopeAttention) is read from vnew instead.
template <typename T, uint NS, bool RK>
static inline __attribute__((always_inline)) void attn_values(thread float* acc, threadgroup const float* pw,
                                                              device const T* vb, ulong ps, uint nk, uint lane,
                                                              uint hd, uint kn, device const T* vnew) {
    constexpr uint B = NS <= 2 ? 16 : 8;
    uint dd[NS];
    #pragma unroll
    for (uint i = 0; i < NS; i++) {
        dd[i] = min(lane + 32 * i, hd - 1);
    }
    uint k = 0;
    for (; k + B <= nk; k += B) {
        T v[B][NS];
        #pragma unroll
        for (uint u = 0; u < B; u++) {
            device const T* vr = vb + (k + u) * ps;
            if (RK && k + u == kn) {
                vr = vnew;
            }
            #pragma unroll
            for (uint i = 0; i < NS; i++) {
                v[u][i] = vr[dd[i]];
            }
        }
        #pragma unroll
        for (uint u = 0; u < B; u++) {
            const float pk = pw[k + u];
            #pragma unroll
            for (uint i = 0; i < NS; i++) {
                acc[i] += pk * float(v[u][i]);
            }
        }
    }
    if (k < nk) {
        // the block's last nk % B keys as one more batch, rows clamped
        // into the block: the keys past nk weigh 0 (pw is 0 past the
        // visible keys, and a clamped row is a written one, or vnew), so
        // the sums are unchanged, with one round trip instead of one a key
        // (a 20-key cache: 2 instead of 6; the cross-attention's last
        // 28-key chunk: 2 instead of 13)
        T v[B][NS];
        #pragma unroll
        for (uint u = 0; u < B; u++) {
            const uint r = min(k + u, nk - 1);
            device const T* vr = RK && r == kn ? vnew : vb + r * ps;
            #pragma unroll
            for (uint i = 0; i < NS; i++) {
                v[u][i] = vr[dd[i]];
            }
        }
        #pragma unroll
        for (uint u = 0; u < B; u++) {
            const float pk = pw[k + u];
            #pragma unroll
            for (uint i = 0; i < NS; i++) {
                acc[i] += pk * float(v[u][i]);
            }
        }
    }
}

// attn_exp is the softmax's exp in attention_impl: RK (RopeAttention,
// decode only) takes the GPU's approximation (fast::exp: on CUDA
// ex2.approx, 2 instructions where exp is ~40 in double; issue #34 allows
// it for decode kernels, and TestRopeAttentionKernel's 2e-5 holds on the
// GPU); Attention, whose probs and prefill rows keep their references,
// keeps exp.
template <bool RK>
static inline float attn_exp(float x) {
    return RK ? fast::exp(x) : exp(x);
}

// attention_impl is one SIMD-group's (row, head, chunk) of attention and
// attention_group: chunk tg.x of ntgs.x. With several chunks its partial
// (max, sum, acc) goes to the device scratch for attention_merge, or with
// GROUP to gpart, the threadgroup's partials, for attention_group to merge.
// RK (RopeAttention, rope_attention.metal): q is the SIMD-group's rotated
// query row qrk, and the row's new key (its own position) is read from
// knew and vnew, not from the caches, which the same launch writes. A16:
// the K rows, knew and qrk are 16-byte aligned and hd a multiple of 16
// (attn_dot_a16). Always inlined: with the ticket kernels as second
// callers clang made it a call of its own in the entries.
template <typename T, bool GROUP, bool RK = false, bool A16 = false>
static inline __attribute__((always_inline)) void attention_impl(device const float* q, device const T* K, device const T* V, device float* out,
                                  device float* probs, device float* scratch, constant Args& args, uint3 tg,
                                  uint3 ntgs, uint sg, uint nsg, uint lane, threadgroup float* pw,
                                  threadgroup float* gpart, device const float* qrk = nullptr,
                                  device const T* knew = nullptr, device const T* vnew = nullptr) {
    const uint hd = args.attend.head_dim;
    const uint nHead = args.attend.n_head;
    const uint nKV = args.attend.nkv;
    const uint m = args.attend.m;
    const uint kvLen = args.attend.kv_len;
    const float scale = args.attend.scale;
    const uint c = tg.x;
    const uint nc = ntgs.x;
    const uint h = tg.y;
    const uint t = tg.z * nsg + sg;
    if (t >= m) {
        return;
    }
    const bool perSeq = (args.attend.flags & KFLAG_PER_SEQ_ROWS) != 0;
    const uint seq = perSeq ? t : 0u;
    const uint nvis = attn_visible(args, t);
    const uint clen = attn_chunk_len(kvLen, nc);
    const uint j0 = c * clen;
    const uint j1 = min(j0 + clen, nvis);
    const uint first = attn_first<RK>(args, t);
    const ulong ps = args.attend.pos_stride;
    const ulong base = (ulong)seq * args.attend.seq_stride + (ulong)(h / (nHead / nKV)) * args.attend.head_stride;
    device const T* Kh = K + base;
    device const T* Vh = V + base;
    device const float* qr = RK ? qrk : q + (ulong)t * args.attend.ldq + h * hd;
    const uint jnew = perSeq ? args.attend.pos0 : args.attend.pos0 + t; // the row's own key (RK)
    const bool hasP = !RK && has_bind(args, ATTENTION_PROBS);
    device float* pr = probs + (ulong)(h * m + t) * args.attention.ldp;

    // acc is indexed only by unrolled loops to the compile-time bound: on
    // CUDA a run-time index (i < nd) puts it in local memory, a load and a
    // store per key and dim (issue #34, cuda/localmem_test.go)
    float acc[ATTN_MAX_HD / 32];
    #pragma unroll
    for (uint i = 0; i < ATTN_MAX_HD / 32; i++) {
        acc[i] = 0.0f;
    }
    const uint ns = (hd + 31) / 32; // value slots a lane uses
    float M = -INFINITY;
    float S = 0.0f;
    // blocks stay 32-aligned (lane j%32 owns key j); keys before the
    // window are masked
    for (uint jb = max(j0, first & ~31u); jb < j1; jb += 32) {
        const uint j = jb + lane;
        float s = -INFINITY;
        if (j >= first && j < j1) {
            device const T* kr = Kh + j * ps;
            if (RK && j == jnew) {
                kr = knew;
            }
            s = (A16 ? attn_dot_a16(qr, kr, hd) : attn_dot(qr, kr, hd)) * scale;
            if (hasP) {
                pr[j] = s;
            }
        }
        const float mb = simd_max(s);
        const float nm = max(M, mb);
        const float corr = attn_exp<RK>(M - nm); // M = −inf on the first block: 0
        const float p = j >= first && j < j1 ? attn_exp<RK>(s - nm) : 0.0f;
        S = S * corr + simd_sum(p);
        #pragma unroll
        for (uint i = 0; i < ATTN_MAX_HD / 32; i++) {
            acc[i] *= corr; // (dims past hd: zeros, never stored)
        }
        pw[lane] = p;
        simdgroup_barrier(mem_flags::mem_threadgroup);
        const uint nk = min(32u, j1 - jb);
        device const T* vb = Vh + jb * ps;
        const uint kn = jnew - jb; // (RK; past the block when the new key is not in it)
        if (ns <= 1) {
            attn_values<T, 1, RK>(acc, pw, vb, ps, nk, lane, hd, kn, vnew);
        } else if (ns <= 2) {
            attn_values<T, 2, RK>(acc, pw, vb, ps, nk, lane, hd, kn, vnew);
        } else if (ns <= 4) {
            attn_values<T, 4, RK>(acc, pw, vb, ps, nk, lane, hd, kn, vnew);
        } else {
            attn_values<T, ATTN_MAX_HD / 32, RK>(acc, pw, vb, ps, nk, lane, hd, kn, vnew);
        }
        simdgroup_barrier(mem_flags::mem_threadgroup); // pw is rewritten next block
        M = nm;
    }
    if (GROUP && nc > 1) {
        threadgroup float* gp = gpart + c * (hd + 2);
        if (lane == 0) {
            gp[0] = M;
            gp[1] = S;
        }
        #pragma unroll
        for (uint i = 0; i < ATTN_MAX_HD / 32; i++) {
            const uint d = lane + 32 * i;
            if (d < hd) {
                gp[2 + d] = acc[i];
            }
        }
        return;
    }
    if (nc > 1) {
        device float* part = scratch + ATTN_SCRATCH_HEAD + (ulong)((t * nHead + h) * nc + c) * (hd + 2);
        if (lane == 0 && c == 0 && h == 0 && t == 0) {
            scratch[0] = as_type<float>(nc); // the merge's chunk count
        }
        if (lane == 0) {
            part[0] = M;
            part[1] = S;
        }
        #pragma unroll
        for (uint i = 0; i < ATTN_MAX_HD / 32; i++) {
            const uint d = lane + 32 * i;
            if (d < hd) {
                part[2 + d] = acc[i];
            }
        }
        return;
    }
    device float* o = out + (ulong)t * args.attend.ldo + h * hd;
    const float inv = S > 0.0f ? 1.0f / S : 0.0f; // no visible key: zero output
    #pragma unroll
    for (uint i = 0; i < ATTN_MAX_HD / 32; i++) {
        const uint d = lane + 32 * i;
        if (d < hd) {
            o[d] = acc[i] * inv;
        }
    }
    if (hasP) {
        for (uint j = lane; j < kvLen; j += 32) {
            pr[j] = j >= first && j < nvis ? exp(pr[j] - M) * inv : 0.0f;
        }
    }
}

template <typename T>
kernel void attention(device const float* q [[buffer(0)]],
                      device const T* K [[buffer(1)]],
                      device const T* V [[buffer(2)]],
                      device float* out [[buffer(3)]],
                      device float* probs [[buffer(4)]],
                      constant Args& args [[buffer(8)]],
                      device float* scratch [[buffer(10)]],
                      uint3 tg [[threadgroup_position_in_grid]],
                      uint3 ntgs [[threadgroups_per_grid]],
                      uint sg [[simdgroup_index_in_threadgroup]],
                      uint nsg [[simdgroups_per_threadgroup]],
                      uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float pw[32 * 32]; // 32 key weights per SIMD-group
    attention_impl<T, false>(q, K, V, out, probs, scratch, args, tg, ntgs, sg, nsg, lane, pw + 32 * sg, pw);
}

typedef decltype(attention<float>) attention_f32_t;
typedef decltype(attention<half>) attention_f16_t;
template [[host_name("attention_f32")]] kernel attention_f32_t attention<float>;
template [[host_name("attention_f16")]] kernel attention_f16_t attention<half>;

// attn_max_step and attn_sum_step fold one partial (sum sc, max mc) into
// the running max, and its weighted value v (its sum, or a dim of its
// accumulator) into the running sum s; a partial with no visible key (sum
// 0) changes neither. Selects, not branches: attn_combine loads a step's
// partials before it uses any.
static inline float attn_max_step(float M, float sc, float mc) { return sc > 0.0f ? max(M, mc) : M; }
static inline float attn_sum_step(float s, float sc, float mc, float M, float v) {
    return sc > 0.0f ? s + exp(mc - M) * v : s;
}

// attn_combine writes o[0..hd) from the nc partials (max, sum, acc[hd]) at
// part (device scratch or threadgroup memory), threads tid, tid+ntg, ... one
// dim each, and returns the global max and 1/sum. The partials are read four
// at a time, every load of a step before its first use (a load under each
// partial's condition waited out its latency a partial; issue #34); they
// are folded in the same order as one at a time.
template <typename P>
static inline float2 attn_combine(P part, uint nc, uint hd, device float* o, uint tid, uint ntg) {
    const uint st = hd + 2;
    float M = -INFINITY;
    uint c = 0;
    for (; c + 4 <= nc; c += 4) {
        const float4 s4 = float4(part[c * st + 1], part[(c + 1) * st + 1], part[(c + 2) * st + 1], part[(c + 3) * st + 1]);
        const float4 m4 = float4(part[c * st], part[(c + 1) * st], part[(c + 2) * st], part[(c + 3) * st]);
        M = attn_max_step(attn_max_step(attn_max_step(attn_max_step(M, s4.x, m4.x), s4.y, m4.y), s4.z, m4.z), s4.w, m4.w);
    }
    for (; c < nc; c++) {
        M = attn_max_step(M, part[c * st + 1], part[c * st]);
    }
    float S = 0.0f;
    for (c = 0; c + 4 <= nc; c += 4) {
        const float4 s4 = float4(part[c * st + 1], part[(c + 1) * st + 1], part[(c + 2) * st + 1], part[(c + 3) * st + 1]);
        const float4 m4 = float4(part[c * st], part[(c + 1) * st], part[(c + 2) * st], part[(c + 3) * st]);
        S = attn_sum_step(S, s4.x, m4.x, M, s4.x);
        S = attn_sum_step(S, s4.y, m4.y, M, s4.y);
        S = attn_sum_step(S, s4.z, m4.z, M, s4.z);
        S = attn_sum_step(S, s4.w, m4.w, M, s4.w);
    }
    for (; c < nc; c++) {
        const float sc = part[c * st + 1];
        S = attn_sum_step(S, sc, part[c * st], M, sc);
    }
    const float inv = S > 0.0f ? 1.0f / S : 0.0f;
    for (uint d = tid; d < hd; d += ntg) {
        float a = 0.0f;
        for (c = 0; c + 4 <= nc; c += 4) {
            const float4 s4 = float4(part[c * st + 1], part[(c + 1) * st + 1], part[(c + 2) * st + 1], part[(c + 3) * st + 1]);
            const float4 m4 = float4(part[c * st], part[(c + 1) * st], part[(c + 2) * st], part[(c + 3) * st]);
            const float4 v4 = float4(part[c * st + 2 + d], part[(c + 1) * st + 2 + d], part[(c + 2) * st + 2 + d],
                                     part[(c + 3) * st + 2 + d]);
            a = attn_sum_step(a, s4.x, m4.x, M, v4.x);
            a = attn_sum_step(a, s4.y, m4.y, M, v4.y);
            a = attn_sum_step(a, s4.z, m4.z, M, v4.z);
            a = attn_sum_step(a, s4.w, m4.w, M, v4.w);
        }
        for (; c < nc; c++) {
            a = attn_sum_step(a, part[c * st + 1], part[c * st], M, part[c * st + 2 + d]);
        }
        o[d] = a * inv;
    }
    return float2(M, inv);
}

// attn_combine_tg is attn_combine over a threadgroup's own partials
// (attention_group's and rope_attention_group's), bit for bit: thread c
// computes chunk c's weight exp(max − M) once into tw (one barrier, reached
// by every thread of the threadgroup), and every thread then folds the sum
// and its dims with those weights in chunk order, as attention_merge does.
// attn_combine took 2·nc exps a thread, on CUDA in double (~40
// instructions each, at about one issue in 9 cycles for the lone warp of
// a scheduler: ncu, bench/cuda/20261130-attn), so the merge grew with
// the cache.
static inline void attn_combine_tg(threadgroup const float* part, uint nc, uint hd, device float* o, uint tid,
                                   uint ntg, threadgroup float* tw) {
    const uint st = hd + 2;
    for (uint c = tid; c < nc; c += ntg) {
        float M = -INFINITY;
        for (uint c2 = 0; c2 < nc; c2++) {
            M = attn_max_step(M, part[c2 * st + 1], part[c2 * st]);
        }
        tw[c] = part[c * st + 1] > 0.0f ? exp(part[c * st] - M) : 0.0f;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float S = 0.0f;
    for (uint c = 0; c < nc; c++) {
        const float sc = part[c * st + 1];
        S = sc > 0.0f ? S + tw[c] * sc : S;
    }
    const float inv = S > 0.0f ? 1.0f / S : 0.0f;
    for (uint d = tid; d < hd; d += ntg) {
        float a = 0.0f;
        for (uint c = 0; c < nc; c++) {
            a = part[c * st + 1] > 0.0f ? a + tw[c] * part[c * st + 2 + d] : a;
        }
        o[d] = a * inv;
    }
}

// attention_group_f16: decode's split over the KV length merged
// inside one threadgroup (issue #34: no attention_merge launch). SIMD-group
// c of a threadgroup runs chunk c of nsg (attention_impl), leaves its
// partial in threadgroup memory, and after one barrier the threadgroup
// combines them as attention_merge does (attn_combine_tg). Grid (1, nHead, m),
// 32·chunks threads, chunks at most ATTN_GROUP_SG (threadgroup memory: the
// partials of 16 chunks of 256 dims are 16.5 KB, within Metal's 32 KB). The
// launch rule picks it for short f16 caches without probs (Tuning.AttnGroupKeys),
// where the split's own launches and its merge cost more than the few
// multiprocessors the heads then occupy.
enum : uint { ATTN_GROUP_SG = 16 };

template <typename T>
kernel void attention_group(device const float* q [[buffer(0)]],
                            device const T* K [[buffer(1)]],
                            device const T* V [[buffer(2)]],
                            device float* out [[buffer(3)]],
                            device float* probs [[buffer(4)]],
                            constant Args& args [[buffer(8)]],
                            uint3 tg [[threadgroup_position_in_grid]],
                            uint sg [[simdgroup_index_in_threadgroup]],
                            uint nsg [[simdgroups_per_threadgroup]],
                            uint lane [[thread_index_in_simdgroup]],
                            uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float pw[32 * ATTN_GROUP_SG];
    threadgroup float gpart[ATTN_GROUP_SG * (ATTN_MAX_HD + 2)];
    threadgroup float tw[ATTN_GROUP_SG];
    const uint nc = min(nsg, (uint)ATTN_GROUP_SG);
    if (sg < nc) {
        attention_impl<T, true>(q, K, V, out, probs, out, args, uint3(sg, tg.y, tg.z), uint3(nc, 1, 1), 0, 1, lane,
                                pw + 32 * sg, gpart);
    }
    if (nc < 2 || tg.z >= args.attention.m) {
        return; // one chunk wrote its row; (no barrier follows for a row past m either)
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const uint hd = args.attention.head_dim;
    device float* o = out + (ulong)tg.z * args.attention.ldo + tg.y * hd;
    attn_combine_tg(gpart, nc, hd, o, tid, 32 * nsg, tw);
}

// attn_ticket ends a split decode attention in its own launch, when the
// host binds the ticket buffer (Tuning.AttnTicket; issue #34: no
// attention_merge launch). Each threadgroup is one SIMD-group, chunk c of
// row t and head h (grid (chunks, nHead, m)), and has written its partial;
// the last of the (t, h)'s nc chunks to arrive (group_ticket on word
// t·nHead + h) resets the word for the next launch and merges the partials
// as attention_merge does, bit for bit: up to ATTN_TICKET_W chunks the
// lanes load the chunks' (max, sum) into tg (threadgroup memory the kernel
// declares: 3·ATTN_TICKET_W floats, then the ticket's verdict) and compute
// each chunk's weight once, and every lane folds the sum and two dims with
// those weights in chunk order, the dims' partials loaded 8 chunks at a
// time before any is used (a load a step left its L2 latency in each step:
// slower than the merge launch); more chunks take attn_combine. No probs
// (the launch rule keeps the merge launch for them).
enum : uint { ATTN_TICKET_W = 64 };

// attn_ticket_merge is attn_ticket's merge, by one SIMD-group: o[0..hd)
// from the nc partials (max, sum, acc[hd]) at part (attention_paged's
// split takes it too). Always inlined, as attention_impl.
static inline __attribute__((always_inline)) void attn_ticket_merge(device const float* part, device float* o, uint nc,
                                                                     uint hd, uint lane, threadgroup float* tg) {
    if (nc > ATTN_TICKET_W) {
        attn_combine(part, nc, hd, o, lane, 32);
        return;
    }
    const uint st = hd + 2;
    threadgroup float* tm = tg;
    threadgroup float* ts = tg + ATTN_TICKET_W;
    threadgroup float* tw = tg + 2 * ATTN_TICKET_W;
    for (uint c = lane; c < nc; c += 32) {
        tm[c] = part[c * st];
        ts[c] = part[c * st + 1];
    }
    simdgroup_barrier(mem_flags::mem_threadgroup);
    float M = -INFINITY;
    for (uint c = 0; c < nc; c++) {
        M = attn_max_step(M, ts[c], tm[c]);
    }
    for (uint c = lane; c < nc; c += 32) {
        tw[c] = ts[c] > 0.0f ? exp(tm[c] - M) : 0.0f;
    }
    simdgroup_barrier(mem_flags::mem_threadgroup);
    float S = 0.0f;
    for (uint c = 0; c < nc; c++) {
        S = ts[c] > 0.0f ? S + tw[c] * ts[c] : S;
    }
    const float inv = S > 0.0f ? 1.0f / S : 0.0f;
    for (uint d0 = 0; d0 < hd; d0 += 64) { // dims d0+lane and d0+32+lane
        const uint da = d0 + lane, db = min(d0 + 32 + lane, hd - 1); // (db past hd: read, not stored)
        const uint dc = min(da, hd - 1);
        float a = 0.0f, b = 0.0f;
        uint c = 0;
        for (; c + 8 <= nc; c += 8) {
            float va[8], vb[8];
            #pragma unroll
            for (uint j = 0; j < 8; j++) {
                va[j] = part[(c + j) * st + 2 + dc];
                vb[j] = part[(c + j) * st + 2 + db];
            }
            #pragma unroll
            for (uint j = 0; j < 8; j++) {
                const bool on = ts[c + j] > 0.0f;
                a = on ? a + tw[c + j] * va[j] : a;
                b = on ? b + tw[c + j] * vb[j] : b;
            }
        }
        for (; c < nc; c++) {
            const bool on = ts[c] > 0.0f;
            a = on ? a + tw[c] * part[c * st + 2 + dc] : a;
            b = on ? b + tw[c] * part[c * st + 2 + db] : b;
        }
        if (da < hd) {
            o[da] = a * inv;
        }
        if (d0 + 32 + lane < hd) {
            o[d0 + 32 + lane] = b * inv;
        }
    }
}

static inline void attn_ticket(device const float* scratch, device float* out, device atomic_uint* tickets,
                               constant Args& args, uint t, uint h, uint nc, uint lane, threadgroup float* tg,
                               threadgroup uint* verdict) {
    const uint hd = args.attend.head_dim;
    const uint nHead = args.attend.n_head;
    device uint* word = (device uint*)(tickets + (t * nHead + h));
    if (!group_ticket(word, nc, verdict, lane)) {
        return;
    }
    if (lane == 0) {
        atomic_store_explicit(tickets + (t * nHead + h), 0u, memory_order_relaxed);
    }
    device const float* part = scratch + ATTN_SCRATCH_HEAD + (ulong)((t * nHead + h) * nc) * (hd + 2);
    attn_ticket_merge(part, out + (ulong)t * args.attend.ldo + h * hd, nc, hd, lane, tg);
}

// attention_ticket_{f32,f16}: attention's split with attn_ticket's merge,
// one SIMD-group a threadgroup; attention_ticket_f32_a16 with 16-byte loads
// of q and the K rows (attn_dot_a16; the launch rule's attentionAligned).
template <typename T, bool A16 = false>
kernel void attention_ticket(device const float* q [[buffer(0)]],
                             device const T* K [[buffer(1)]],
                             device const T* V [[buffer(2)]],
                             device float* out [[buffer(3)]],
                             device float* probs [[buffer(4)]],
                             constant Args& args [[buffer(8)]],
                             device float* scratch [[buffer(10)]],
                             device atomic_uint* tickets [[buffer(11)]],
                             uint3 tg [[threadgroup_position_in_grid]],
                             uint3 ntgs [[threadgroups_per_grid]],
                             uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float pw[32];
    threadgroup float merge[3 * ATTN_TICKET_W];
    threadgroup uint verdict;
    attention_impl<T, false, false, A16>(q, K, V, out, probs, scratch, args, tg, ntgs, 0, 1, lane, pw, pw);
    attn_ticket(scratch, out, tickets, args, tg.z, tg.y, ntgs.x, lane, merge, &verdict);
}

typedef decltype(attention_ticket<float>) attention_ticket_f32_t;
typedef decltype(attention_ticket<half>) attention_ticket_f16_t;
template [[host_name("attention_ticket_f32")]] kernel attention_ticket_f32_t attention_ticket<float>;
template [[host_name("attention_ticket_f16")]] kernel attention_ticket_f16_t attention_ticket<half>;
template [[host_name("attention_ticket_f32_a16")]] kernel attention_ticket_f32_t attention_ticket<float, true>;

// (f16 caches only: the launch rule does not pick it for f32 ones)
typedef decltype(attention_group<half>) attention_group_f16_t;
template [[host_name("attention_group_f16")]] kernel attention_group_f16_t attention_group<half>;

// attention_tiled_{f32,f16}: prefill, encoder and cross-attention rows
// of one sequence (one chunk, no per-sequence rows). The threadgroup's
// SIMD-groups (one query row each, consecutive rows of one head) load each
// tile of 32 keys of K and V into threadgroup memory together (coalesced,
// read once per threadgroup rather than once per row), then score and
// accumulate from it as attention_impl does. Tile rows are padded by one
// 32-bit word so the 32 lanes reading 32 different keys hit different
// banks. Grid: (1, nHead, ceil(m / rows)). The launch rule picks it where
// a tile fits: f32 head sizes up to 64, f16 up to 128.
enum : uint {
    ATTN_TILE_F32 = 32 * 65,  // floats per tile: 32 keys × (64 + 1)
    ATTN_TILE_F16 = 32 * 130, // halves per tile: 32 keys × (128 + 2)
};

template <typename T>
static inline void attention_tiled_impl(device const float* q, device const T* K, device const T* V,
                                        device float* out, device float* probs, constant Args& args, uint3 tg,
                                        uint sg, uint nsg, uint lane, uint tid, threadgroup float* pw,
                                        threadgroup T* Kt, threadgroup T* Vt) {
    const uint hd = args.attention.head_dim;
    const uint nHead = args.attention.n_head;
    const uint nKV = args.attention.nkv;
    const uint m = args.attention.m;
    const uint kvLen = args.attention.kv_len;
    const float scale = args.attention.scale;
    const uint h = tg.y;
    const uint t0 = tg.z * nsg;
    const uint t = t0 + sg;
    const bool active = t < m;
    // keys any row of the group sees (the last row sees the most)
    const uint jEnd = attn_visible(args, min(t0 + nsg, m) - 1);
    const uint nvis = active ? attn_visible(args, t) : 0u;
    const uint first = attn_first(args, t);
    const ulong ps = args.attention.pos_stride;
    const ulong base = (ulong)(h / (nHead / nKV)) * args.attention.head_stride;
    device const T* Kh = K + base;
    device const T* Vh = V + base;
    device const float* qr = q + (ulong)min(t, m - 1) * args.attention.ldq + h * hd;
    const bool hasP = has_bind(args, ATTENTION_PROBS);
    device float* pr = probs + (ulong)(h * m + t) * args.attention.ldp;
    const uint ld = hd + 4 / sizeof(T); // padded tile row, in elements

    // acc is indexed only by unrolled loops to the compile-time bound: on
    // CUDA a run-time index (i < nd) puts it in local memory, a load and a
    // store per key and dim (issue #34, cuda/localmem_test.go)
    float acc[ATTN_MAX_HD / 32];
    #pragma unroll
    for (uint i = 0; i < ATTN_MAX_HD / 32; i++) {
        acc[i] = 0.0f;
    }
    float M = -INFINITY;
    float S = 0.0f;
    // from the first tile any row of the group sees (its first row's window)
    for (uint jb = attn_first(args, t0) & ~31u; jb < jEnd; jb += 32) {
        const uint nk = min(32u, jEnd - jb);
        for (uint e = tid; e < nk * hd; e += 32 * nsg) {
            const uint k = e / hd;
            const uint d = e - k * hd;
            const ulong src = (ulong)(jb + k) * ps + d;
            Kt[k * ld + d] = Kh[src];
            Vt[k * ld + d] = Vh[src];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (active && jb < nvis && jb + 32 > first) {
            const uint j1 = min(nvis, jb + 32); // keys of this tile the row sees
            const uint j = jb + lane;
            float s = -INFINITY;
            if (j >= first && j < j1) {
                threadgroup const T* kr = Kt + lane * ld;
                float d = 0.0f;
                for (uint i = 0; i < hd; i++) {
                    d += qr[i] * float(kr[i]);
                }
                s = d * scale;
                if (hasP) {
                    pr[j] = s;
                }
            }
            const float mb = simd_max(s);
            const float nm = max(M, mb);
            const float corr = exp(M - nm);
            const float p = j >= first && j < j1 ? exp(s - nm) : 0.0f;
            S = S * corr + simd_sum(p);
            #pragma unroll
            for (uint i = 0; i < ATTN_MAX_HD / 32; i++) {
                acc[i] *= corr; // (dims past hd: zeros, never stored)
            }
            pw[lane] = p;
            simdgroup_barrier(mem_flags::mem_threadgroup);
            for (uint k = 0; k < j1 - jb; k++) {
                const float pk = pw[k];
                threadgroup const T* vr = Vt + k * ld;
                #pragma unroll
                for (uint i = 0; i < ATTN_MAX_HD / 32; i++) {
                    const uint d = lane + 32 * i;
                    if (d < hd) {
                        acc[i] += pk * float(vr[d]);
                    }
                }
            }
            M = nm;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup); // tiles and pw are rewritten next
    }
    if (!active) {
        return;
    }
    device float* o = out + (ulong)t * args.attention.ldo + h * hd;
    const float inv = S > 0.0f ? 1.0f / S : 0.0f;
    #pragma unroll
    for (uint i = 0; i < ATTN_MAX_HD / 32; i++) {
        const uint d = lane + 32 * i;
        if (d < hd) {
            o[d] = acc[i] * inv;
        }
    }
    if (hasP) {
        for (uint j = lane; j < kvLen; j += 32) {
            pr[j] = j >= first && j < nvis ? exp(pr[j] - M) * inv : 0.0f;
        }
    }
}

kernel void attention_tiled_f32(device const float* q [[buffer(0)]],
                                device const float* K [[buffer(1)]],
                                device const float* V [[buffer(2)]],
                                device float* out [[buffer(3)]],
                                device float* probs [[buffer(4)]],
                                constant Args& args [[buffer(8)]],
                                uint3 tg [[threadgroup_position_in_grid]],
                                uint sg [[simdgroup_index_in_threadgroup]],
                                uint nsg [[simdgroups_per_threadgroup]],
                                uint lane [[thread_index_in_simdgroup]],
                                uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float pw[32 * 32];
    threadgroup float Kt[ATTN_TILE_F32];
    threadgroup float Vt[ATTN_TILE_F32];
    attention_tiled_impl<float>(q, K, V, out, probs, args, tg, sg, nsg, lane, tid, pw + 32 * sg, Kt, Vt);
}

kernel void attention_tiled_f16(device const float* q [[buffer(0)]],
                                device const half* K [[buffer(1)]],
                                device const half* V [[buffer(2)]],
                                device float* out [[buffer(3)]],
                                device float* probs [[buffer(4)]],
                                constant Args& args [[buffer(8)]],
                                uint3 tg [[threadgroup_position_in_grid]],
                                uint sg [[simdgroup_index_in_threadgroup]],
                                uint nsg [[simdgroups_per_threadgroup]],
                                uint lane [[thread_index_in_simdgroup]],
                                uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float pw[32 * 32];
    threadgroup half Kt[ATTN_TILE_F16];
    threadgroup half Vt[ATTN_TILE_F16];
    attention_tiled_impl<half>(q, K, V, out, probs, args, tg, sg, nsg, lane, tid, pw + 32 * sg, Kt, Vt);
}

// attention_mma_{f32,f16}: the tiled kernel with simdgroup_matrix
// products, for head sizes that are multiples of 8 up to 64 (Whisper's
// encoder and cross-attention, 64-dim LLM prefill). Each SIMD-group owns 8
// query rows; per 32-key tile (K and V staged in threadgroup memory as
// float, shared by the threadgroup's SIMD-groups) it computes S = Q·Kᵀ as
// 8×8 products, lanes 0..7 run the online softmax of one row each, and
// O = diag(corr)·O + P·V as 8×8 products. Grid: (1, nHead, ceil(m / 16)),
// 64 threads.
enum : uint {
    ATTN_MMA_SG = 2,       // SIMD-groups (8 rows each) per threadgroup
    ATTN_MMA_HD = 64,      // largest head size
};

template <typename T>
static inline void attention_mma_impl(device const float* q, device const T* K, device const T* V, device float* out,
                                      device float* probs, constant Args& args, uint3 tg, uint sg, uint lane,
                                      uint tid, threadgroup float* Kt, threadgroup float* Vt, threadgroup float* Qs,
                                      threadgroup float* Ss, threadgroup float* Ds, threadgroup float* Rs) {
    const uint hd = args.attention.head_dim;
    const uint nHead = args.attention.n_head;
    const uint nKV = args.attention.nkv;
    const uint m = args.attention.m;
    const uint kvLen = args.attention.kv_len;
    const float scale = args.attention.scale;
    const uint h = tg.y;
    const uint t0 = tg.z * 8 * ATTN_MMA_SG;
    const uint tr0 = t0 + 8 * sg; // this SIMD-group's first row
    const uint jEnd = attn_visible(args, min(t0 + 8 * ATTN_MMA_SG, m) - 1);
    const bool anyRow = tr0 < m;
    const uint jRows = anyRow ? attn_visible(args, min(tr0 + 8, m) - 1) : 0u; // keys its rows see
    const ulong ps = args.attention.pos_stride;
    const ulong base = (ulong)(h / (nHead / nKV)) * args.attention.head_stride;
    const bool hasP = has_bind(args, ATTENTION_PROBS);
    const uint nb = hd / 8;

    // Q rows (zero past m), row-major 8 × hd
    for (uint e = lane; e < 8 * hd; e += 32) {
        const uint r = e / hd;
        const uint t = tr0 + r;
        Qs[e] = t < m ? q[(ulong)t * args.attention.ldq + h * hd + (e - r * hd)] : 0.0f;
    }
    // lane r < 8 keeps row r's softmax state
    const uint myT = tr0 + lane;
    const bool myRow = lane < 8 && myT < m;
    const uint nvis = myRow ? attn_visible(args, myT) : 0u;
    const uint jf = myRow ? attn_first(args, myT) : 0u; // window start of row `lane`
    device float* pr = probs + (ulong)(h * m + (myRow ? myT : 0u)) * args.attention.ldp;
    float M = -INFINITY;
    float S = 0.0f;

    simdgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_float8x8 O[ATTN_MMA_HD / 8];
    simdgroup_float8x8 Qm[ATTN_MMA_HD / 8]; // Q's 8×8 blocks, loaded once
    for (uint b = 0; b < ATTN_MMA_HD / 8; b++) {
        O[b] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
        if (b < nb) {
            simdgroup_load(Qm[b], Qs + b * 8, hd);
        }
    }
    // from the first tile any row of the group sees (its first row's window)
    for (uint jb = attn_first(args, t0) & ~31u; jb < jEnd; jb += 32) {
        const uint nk = min(32u, jEnd - jb);
        for (uint e = tid; e < 32 * hd; e += 32 * ATTN_MMA_SG) {
            const uint k = e / hd;
            const uint d = e - k * hd;
            const ulong src = (ulong)(jb + k) * ps + d;
            Kt[e] = k < nk ? float(K[base + src]) : 0.0f; // zeros: products must not meet garbage
            Vt[e] = k < nk ? float(V[base + src]) : 0.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (anyRow && jb < jRows) {
            // S = Q·Kᵀ, 8 rows × 32 keys
            for (uint kb = 0; kb < 4; kb++) {
                simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
                for (uint db = 0; db < ATTN_MMA_HD / 8; db++) {
                    if (db < nb) {
                        simdgroup_float8x8 bt;
                        simdgroup_load(bt, Kt + kb * 8 * hd + db * 8, hd, ulong2(0, 0), true);
                        simdgroup_multiply_accumulate(acc, Qm[db], bt, acc);
                    }
                }
                simdgroup_store(acc, Ss + kb * 8, 32);
            }
            simdgroup_barrier(mem_flags::mem_threadgroup);
            bool rescale = false;
            if (lane < 8) {
                // online softmax of row `lane`; P replaces S, corr goes on
                // the diagonal of D
                threadgroup float* srow = Ss + lane * 32;
                const uint jv = myRow ? min(nvis, jb + nk) : jb; // visible keys end
                float mb = -INFINITY;
                for (uint k = 0; jb + k < jv; k++) {
                    if (jb + k < jf) {
                        continue; // before the row's window
                    }
                    const float sv = srow[k] * scale;
                    srow[k] = sv;
                    mb = max(mb, sv);
                    if (hasP) {
                        pr[jb + k] = sv;
                    }
                }
                const float nm = max(M, mb);
                const bool none = max(jb, jf) >= jv; // nothing visible in this tile
                const float corr = none ? 1.0f : exp(M - nm);
                float sum = 0.0f;
                for (uint k = 0; k < 32; k++) {
                    const float pv = jb + k >= jf && jb + k < jv ? exp(srow[k] - nm) : 0.0f;
                    srow[k] = pv;
                    sum += pv;
                }
                if (!none) {
                    S = S * corr + sum;
                    M = nm;
                }
                rescale = corr != 1.0f;
                for (uint c = 0; c < 8; c++) {
                    Ds[lane * 8 + c] = c == lane ? corr : 0.0f;
                }
            }
            simdgroup_barrier(mem_flags::mem_threadgroup);
            simdgroup_float8x8 dm;
            simdgroup_load(dm, Ds, 8);
            // O = diag(corr)·O only when some row's max moved (it settles
            // after the first tiles); constant trip counts (b < nb inside)
            // keep O in registers
            const bool anyRescale = simd_any(rescale);
            for (uint b = 0; b < ATTN_MMA_HD / 8; b++) {
                if (anyRescale && b < nb) {
                    simdgroup_float8x8 scaled;
                    simdgroup_multiply(scaled, dm, O[b]);
                    O[b] = scaled;
                }
            }
            for (uint kb = 0; kb < 4; kb++) {
                simdgroup_float8x8 pm;
                simdgroup_load(pm, Ss + kb * 8, 32);
                for (uint b = 0; b < ATTN_MMA_HD / 8; b++) {
                    if (b < nb) {
                        simdgroup_float8x8 vb;
                        simdgroup_load(vb, Vt + kb * 8 * hd + b * 8, hd);
                        simdgroup_multiply_accumulate(O[b], pm, vb, O[b]);
                    }
                }
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup); // tiles, S and D are rewritten next
    }
    if (!anyRow) {
        return;
    }
    // O to threadgroup memory (over Q), then rows scaled by 1/S
    for (uint b = 0; b < ATTN_MMA_HD / 8; b++) {
        if (b < nb) {
            simdgroup_store(O[b], Qs + b * 8, hd);
        }
    }
    if (lane < 8) {
        Rs[lane] = S > 0.0f ? 1.0f / S : 0.0f; // no visible key: zero output
        Rs[8 + lane] = M;
    }
    simdgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);
    for (uint e = lane; e < 8 * hd; e += 32) {
        const uint r = e / hd;
        const uint t = tr0 + r;
        if (t < m) {
            out[(ulong)t * args.attention.ldo + h * hd + (e - r * hd)] = Qs[e] * Rs[r];
        }
    }
    if (hasP) {
        for (uint r = 0; r < 8 && tr0 + r < m; r++) {
            const uint t = tr0 + r;
            const uint nv = attn_visible(args, t);
            const uint f = attn_first(args, t);
            device float* prow = probs + (ulong)(h * m + t) * args.attention.ldp;
            for (uint j = lane; j < kvLen; j += 32) {
                prow[j] = j >= f && j < nv ? exp(prow[j] - Rs[8 + r]) * Rs[r] : 0.0f;
            }
        }
    }
}

template <typename T>
kernel void attention_mma(device const float* q [[buffer(0)]],
                          device const T* K [[buffer(1)]],
                          device const T* V [[buffer(2)]],
                          device float* out [[buffer(3)]],
                          device float* probs [[buffer(4)]],
                          constant Args& args [[buffer(8)]],
                          uint3 tg [[threadgroup_position_in_grid]],
                          uint sg [[simdgroup_index_in_threadgroup]],
                          uint lane [[thread_index_in_simdgroup]],
                          uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float Kt[32 * ATTN_MMA_HD];
    threadgroup float Vt[32 * ATTN_MMA_HD];
    threadgroup float Qs[ATTN_MMA_SG * 8 * ATTN_MMA_HD];
    threadgroup float Ss[ATTN_MMA_SG * 8 * 32];
    threadgroup float Ds[ATTN_MMA_SG * 64];
    threadgroup float Rs[ATTN_MMA_SG * 16];
    attention_mma_impl<T>(q, K, V, out, probs, args, tg, sg, lane, tid, Kt, Vt, Qs + sg * 8 * ATTN_MMA_HD,
                          Ss + sg * 8 * 32, Ds + sg * 64, Rs + sg * 16);
}

typedef decltype(attention_mma<float>) attention_mma_f32_t;
typedef decltype(attention_mma<half>) attention_mma_f16_t;
template [[host_name("attention_mma_f32")]] kernel attention_mma_f32_t attention_mma<float>;
template [[host_name("attention_mma_f16")]] kernel attention_mma_f16_t attention_mma<half>;

// attention_merge combines the chunks of one (t, h). Groups: (nHead, m).
// The chunk count is the word the first launch left at scratch[0]. A chunk
// that saw no key has sum 0 and is skipped, which also keeps −inf − −inf
// out of exp. Up to ATTN_MERGE_W chunks, the threads first load the
// chunks' (max, sum) into threadgroup memory and each computes the weight
// exp(max − M) of one chunk; then every thread folds the sum and its dims
// with those weights in chunk order: the same arithmetic as attn_combine,
// bit for bit, without its chain of nc exps a thread (on CUDA exp is
// evaluated in double: the Whisper decoder's 47-chunk cross-attention
// merge took 27 µs, issue #34). More chunks take attn_combine.
// P: the dispatch may bind probs (Attention; rope_attention_merge, for
// RopeAttention, has none: its binding 4 is freqs).
#define ATTN_MERGE_W 64
template <bool P>
kernel void attention_merge(device float* out [[buffer(3)]],
                            device float* probs [[buffer(4)]],
                            constant Args& args [[buffer(8)]],
                            device const float* scratch [[buffer(10)]],
                            uint2 tg [[threadgroup_position_in_grid]],
                            uint tid [[thread_position_in_threadgroup]],
                            uint ntg [[threads_per_threadgroup]]) {
    threadgroup float tm[ATTN_MERGE_W]; // the chunks' maxima, sums and weights
    threadgroup float ts[ATTN_MERGE_W];
    threadgroup float tw[ATTN_MERGE_W];
    const uint hd = args.attend.head_dim;
    const uint nHead = args.attend.n_head;
    const uint m = args.attend.m;
    const uint kvLen = args.attend.kv_len;
    const uint h = tg.x;
    const uint t = tg.y;
    const uint nc = as_type<uint>(scratch[0]);
    device const float* part = scratch + ATTN_SCRATCH_HEAD + (ulong)((t * nHead + h) * nc) * (hd + 2);
    device float* o = out + (ulong)t * args.attend.ldo + h * hd;
    float M, inv;
    if (nc <= ATTN_MERGE_W) { // the same for the whole threadgroup: the barriers are reached by all
        const uint st = hd + 2;
        for (uint c = tid; c < nc; c += ntg) {
            tm[c] = part[c * st];
            ts[c] = part[c * st + 1];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        M = -INFINITY;
        for (uint c = 0; c < nc; c++) {
            M = attn_max_step(M, ts[c], tm[c]);
        }
        for (uint c = tid; c < nc; c += ntg) {
            tw[c] = ts[c] > 0.0f ? exp(tm[c] - M) : 0.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        float S = 0.0f;
        for (uint c = 0; c < nc; c++) {
            S = ts[c] > 0.0f ? S + tw[c] * ts[c] : S;
        }
        inv = S > 0.0f ? 1.0f / S : 0.0f;
        for (uint d = tid; d < hd; d += ntg) {
            float a = 0.0f;
            uint c = 0;
            for (; c + 4 <= nc; c += 4) { // the four loads go out together
                const float4 v4 = float4(part[c * st + 2 + d], part[(c + 1) * st + 2 + d], part[(c + 2) * st + 2 + d],
                                         part[(c + 3) * st + 2 + d]);
                a = ts[c] > 0.0f ? a + tw[c] * v4.x : a;
                a = ts[c + 1] > 0.0f ? a + tw[c + 1] * v4.y : a;
                a = ts[c + 2] > 0.0f ? a + tw[c + 2] * v4.z : a;
                a = ts[c + 3] > 0.0f ? a + tw[c + 3] * v4.w : a;
            }
            for (; c < nc; c++) {
                a = ts[c] > 0.0f ? a + tw[c] * part[c * st + 2 + d] : a;
            }
            o[d] = a * inv;
        }
    } else {
        const float2 mi = attn_combine(part, nc, hd, o, tid, ntg);
        M = mi.x;
        inv = mi.y;
    }
    if (P && has_bind(args, ATTENTION_PROBS)) {
        const uint nvis = attn_visible(args, t);
        const uint first = attn_first(args, t);
        device float* pr = probs + (ulong)(h * m + t) * args.attention.ldp;
        for (uint j = tid; j < kvLen; j += ntg) {
            pr[j] = j >= first && j < nvis ? exp(pr[j] - M) * inv : 0.0f;
        }
    }
}

typedef decltype(attention_merge<true>) attention_merge_t;
template [[host_name("attention_merge")]] kernel attention_merge_t attention_merge<true>;
template [[host_name("rope_attention_merge")]] kernel attention_merge_t attention_merge<false>;
