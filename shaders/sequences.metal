// Decode for M sequences over a paged KV cache (plan.RopeKVPaged,
// plan.AttentionPaged): row t is its own sequence at position pos[t], whose
// keys live in the blocks its table row names. The file comes after
// attention.metal and rope.metal (sources are joined in name order) and
// reuses their helpers.
//
// Tables are data: a row whose position is past its table, or that names a
// block outside the pool, is skipped (rope) or gets a zero output
// (attention) rather than touching memory it does not own; the CPU
// backend reports those rows as errors.

// paged_row_ok_simd checks row t's position and every block it can reach,
// 32 at a time by a SIMD-group's lanes (every lane gets the answer): one
// load round for a row of up to 32 blocks.
static inline bool paged_row_ok_simd(device const int* pos, device const int* table, uint t, uint bs, uint ts,
                                     uint nBlocks, uint lane) {
    const int p = pos[t];
    if (p < 0 || uint(p) / bs >= ts) {
        return false;
    }
    uint bad = 0u;
    for (uint i = lane; i <= uint(p) / bs; i += 32u) {
        const int b = table[(ulong)t * ts + i];
        if (b < 0 || uint(b) >= nBlocks) {
            bad = 1u;
        }
    }
    return simd_or(bad) == 0u;
}

// paged_at is the element offset of (row t, kv head h, position p).
static inline ulong paged_at(device const int* table, uint t, uint ts, uint bs, ulong bstride, ulong hs, ulong ps,
                             uint h, uint p) {
    const uint b = uint(table[(ulong)t * ts + p / bs]);
    return (ulong)b * bstride + (ulong)h * hs + (ulong)(p % bs) * ps;
}

// rope_kv_paged_{f32,f16} (args.rope_kv_paged). Groups: (m, nHead+nKV), as
// rope_kv.
template <typename C>
kernel void rope_kv_paged(device float* qkv [[buffer(0)]],
                          device const float* freqs [[buffer(1)]],
                          device C* kc [[buffer(2)]],
                          device C* vc [[buffer(3)]],
                          device const int* pos [[buffer(4)]],
                          device const int* table [[buffer(5)]],
                          constant Args& args [[buffer(8)]],
                          uint2 tg [[threadgroup_position_in_grid]],
                          uint tid [[thread_position_in_threadgroup]],
                          uint ntg [[threads_per_threadgroup]],
                          uint lane [[thread_index_in_simdgroup]]) {
    const uint hd = args.rope_kv_paged.head_dim;
    const uint nHead = args.rope_kv_paged.n_head;
    const uint nKV = args.rope_kv_paged.nkv;
    const uint bs = args.rope_kv_paged.block_size;
    const uint ts = args.rope_kv_paged.table_stride;
    const uint t = tg.x;
    const uint hh = tg.y;
    // a SIMD-group's lanes check the table together (every thread's
    // threadgroup is whole SIMD-groups: simdThreads); one thread walking a
    // 4,000-key prompt row's 250 blocks took ~15 µs a launch (an H200,
    // BENCHMARKS.md, b38)
    if (!paged_row_ok_simd(pos, table, t, bs, ts, args.rope_kv_paged.n_blocks, lane)) {
        return;
    }
    const uint p = uint(pos[t]);
    const uint ropeDim = args.rope_kv_paged.rope_dim == 0 ? hd : args.rope_kv_paged.rope_dim;
    float ms = args.rope_kv_paged.m_scale;
    if (ms == 0.0f) {
        ms = 1.0f;
    }
    device float* row = qkv + (ulong)t * args.rope_kv_paged.ldqkv;
    device float* v = row + hh * hd;
    const bool rot = has_bind(args, ROPE_KV_PAGED_FREQS);
    const bool isK = hh >= nHead;
    const ulong dst = isK ? paged_at(table, t, ts, bs, args.rope_kv_paged.block_stride, args.rope_kv_paged.head_stride,
                                     args.rope_kv_paged.pos_stride, hh - nHead, p)
                          : 0ul;
    device C* kd = kc + dst;
    if (rot) {
        rope_head<C>(v, ropeDim / 2, args.rope_kv_paged.mode == KROPE_NEOX, p, freqs, ms, kd, isK, tid, ntg);
    }
    if (!isK) {
        return;
    }
    for (uint i = (rot ? ropeDim : 0) + tid; i < hd; i += ntg) {
        kd[i] = C(v[i]);
    }
    device const float* vv = row + (nHead + nKV + (hh - nHead)) * hd;
    device C* vdst = vc + dst;
    for (uint i = tid; i < hd; i += ntg) {
        vdst[i] = C(vv[i]);
    }
}

typedef decltype(rope_kv_paged<float>) rope_kv_paged_f32_t;
typedef decltype(rope_kv_paged<half>) rope_kv_paged_f16_t;
template [[host_name("rope_kv_paged_f32")]] kernel rope_kv_paged_f32_t rope_kv_paged<float>;
template [[host_name("rope_kv_paged_f16")]] kernel rope_kv_paged_f16_t rope_kv_paged<half>;

// attention_paged_{f32,f16} (args.attention_paged): threadgroups of up to
// ATTN_PAGED_MAX_SG SIMD-groups; SIMD-group g of a threadgroup walks its
// 32-key tiles g, g+n, g+2n, ... (keys one per lane, an online softmax,
// then the values with lanes over the head dims: attention_impl's scheme,
// with each key's row looked up in the row's block table), and the
// group's partials are merged at the end. One SIMD-group walking every
// tile was a chain of dependent loads per key (66 µs a layer at 128 keys
// on an H200, most of a batched step's time); split over 8 it is an
// eighth as long. Each lane looks its key's cell up once and the value
// loop takes the offsets from the lanes by shuffles, so its loads do not
// wait on table loads. Grid: (chunks, nHead, m); threads: 32 per
// SIMD-group.
//
// The split over the keys (issue #38): a row's keys, from its first
// tile, go in chunks of attn_chunk_len(tableStride·blockSize, chunks)
// keys (a multiple of 32: every tile is in one chunk), so a row gets as
// many threadgroups as it has chunks, a deep prompt row many, a short
// decode row one; the threadgroups past a row's chunks return at once.
// A row of one chunk writes its output as with one chunk a row; a split
// row's chunks write their partials (max, sum, acc) to the scratch, and
// the last to finish (group_ticket on the ticket word t·nHead + h: the
// launch rule splits only where the host binds the ticket buffer) resets
// the word and merges them as attention_ticket does (attn_ticket_merge).
enum : uint {
    ATTN_PAGED_MAX_SG = 8,
    ATTN_PAGED_VB = 8, // keys a batch of paged_values
};

// fc_paged_values (Tuning.AttnPagedValues): 2 takes a tile's values in
// paged_values' batches (heads of up to 128 dims); 1 keeps the loop in
// attention_paged, key by key, whose V loads sit behind a branch per dim
// slot (on CUDA, likely one load's latency after another: ~22 µs a tile on
// an H200, BENCHMARKS.md, stall38).
constant uint fc_paged_values [[function_constant(24)]];

// paged_values adds the weighted V rows of a tile's keys [0, nk) to acc,
// NS dims a lane (dim lane+32i in slot i), as attn_values does: the rows
// of ATTN_PAGED_VB keys loaded before their first product, each key's row
// offset shuffled from the lane that looked it up (at), a slot's dim
// clamped into the row so every load is in bounds without a branch (slots
// past hd sum what is never stored). Keys past nk in the last batch are
// read at key nk-1 and weigh 0 (pw is 0 past the visible keys): each
// slot's sum is the key-by-key loop's, in key order.
template <typename T, uint NS>
static inline __attribute__((always_inline)) void paged_values(thread float* acc, threadgroup const float* pw,
                                                               device const T* V, ulong at, uint nk, uint lane,
                                                               uint hd) {
    uint dd[NS];
    #pragma unroll
    for (uint i = 0; i < NS; i++) {
        dd[i] = min(lane + 32 * i, hd - 1);
    }
    for (uint k = 0; k < nk; k += ATTN_PAGED_VB) {
        T v[ATTN_PAGED_VB][NS];
        #pragma unroll
        for (uint u = 0; u < ATTN_PAGED_VB; u++) {
            const ushort r = ushort(min(k + u, nk - 1));
            const uint lo = simd_shuffle(uint(at & 0xffffffffu), r);
            const uint hi = simd_shuffle(uint(at >> 32), r);
            device const T* vr = V + (((ulong)hi << 32) | lo);
            #pragma unroll
            for (uint i = 0; i < NS; i++) {
                v[u][i] = vr[dd[i]];
            }
        }
        #pragma unroll
        for (uint u = 0; u < ATTN_PAGED_VB; u++) {
            const float pk = pw[k + u];
            #pragma unroll
            for (uint i = 0; i < NS; i++) {
                acc[i] += pk * float(v[u][i]);
            }
        }
    }
}

// A16 (attention_paged_f16_a16): the K rows and q rows 16-byte aligned
// (the launch rule's pagedAligned), so a key's dot takes attn_dot_a16's
// 16-byte loads, the same sums in the same order. attn_dot's packed
// vectors load element by element on CUDA: every lane reading its own key
// row 2 bytes at a time put 32 cache lines behind each of 64 loads a key,
// which bound a step with a deep prompt chunk (L1 wavefronts, not the
// walk's length: no split of the keys shortened it; BENCHMARKS.md, b38).
template <typename T, bool A16 = false>
kernel void attention_paged(device const float* q [[buffer(0)]],
                            device const T* K [[buffer(1)]],
                            device const T* V [[buffer(2)]],
                            device float* out [[buffer(3)]],
                            device const int* pos [[buffer(4)]],
                            device const int* table [[buffer(5)]],
                            constant Args& args [[buffer(8)]],
                            device float* scratch [[buffer(10)]],
                            device atomic_uint* tickets [[buffer(11)]],
                            uint3 tg [[threadgroup_position_in_grid]],
                            uint3 ntgs [[threadgroups_per_grid]],
                            uint tid [[thread_index_in_threadgroup]],
                            uint lane [[thread_index_in_simdgroup]],
                            uint sg [[simdgroup_index_in_threadgroup]],
                            uint nsg [[simdgroups_per_threadgroup]]) {
    threadgroup float pw[ATTN_PAGED_MAX_SG * 32]; // (a split row's merge: 3·ATTN_TICKET_W floats)
    threadgroup float pm[ATTN_PAGED_MAX_SG];
    threadgroup float psum[ATTN_PAGED_MAX_SG];
    threadgroup float pacc[ATTN_PAGED_MAX_SG * ATTN_MAX_HD];
    threadgroup uint verdict;
    const uint hd = args.attention_paged.head_dim;
    const uint nHead = args.attention_paged.n_head;
    const uint nKV = args.attention_paged.nkv;
    const uint bs = args.attention_paged.block_size;
    const uint ts = args.attention_paged.table_stride;
    const ulong bstride = args.attention_paged.block_stride;
    const ulong hs = args.attention_paged.head_stride;
    const ulong ps = args.attention_paged.pos_stride;
    const float scale = args.attention_paged.scale;
    const uint c = tg.x;
    const uint h = tg.y;
    const uint t = tg.z;
    const uint kvh = h / (nHead / nKV);
    const uint nt = nsg * 32;
    // the launch rule never asks for more; extra SIMD-groups would idle
    const uint ng = min(nsg, (uint)ATTN_PAGED_MAX_SG);
    device float* o = out + (ulong)t * args.attention_paged.ldo + h * hd;
    // the row's keys [jb0, nvis) from its first tile, and its chunks (one
    // for a position past the table: paged_row_ok_simd refuses it below)
    const int p0 = pos[t];
    const bool inTable = p0 >= 0 && uint(p0) / bs < ts;
    const uint qpos = inTable ? uint(p0) : 0u;
    const uint nvis = qpos + 1;
    const uint w = args.attention_paged.window;
    const uint first = (w == 0u || qpos + 1u <= w) ? 0u : qpos + 1u - w;
    const uint jb0 = first & ~31u;
    const uint clen = attn_chunk_len(ts * bs, ntgs.x);
    const uint nc = inTable ? (nvis - jb0 + clen - 1) / clen : 1u;
    if (c >= nc) {
        return; // (the whole threadgroup)
    }
    if (!paged_row_ok_simd(pos, table, t, bs, ts, args.attention_paged.n_blocks, lane)) {
        for (uint d = tid; d < hd && c == 0; d += nt) {
            o[d] = 0.0f;
        }
        return; // (every chunk of the row: none takes the ticket)
    }
    const uint j0 = jb0 + c * clen;
    const uint j1 = min(j0 + clen, nvis); // a whole number of tiles but for the row's last
    device const float* qr = q + (ulong)t * args.attention_paged.ldq + h * hd;
    threadgroup float* pws = pw + (sg % ATTN_PAGED_MAX_SG) * 32;

    float acc[ATTN_MAX_HD / 32];
    #pragma unroll
    for (uint i = 0; i < ATTN_MAX_HD / 32; i++) {
        acc[i] = 0.0f;
    }
    float M = -INFINITY;
    float S = 0.0f;
    for (uint jb = j0 + 32u * sg; sg < ng && jb < j1; jb += 32u * ng) {
        const uint j = jb + lane;
        float s = -INFINITY;
        // lane l's key is jb + l: its cell offset, looked up once, serves
        // its K row here and, shuffled, every lane's load of its V row
        const ulong at = j < nvis ? paged_at(table, t, ts, bs, bstride, hs, ps, kvh, j) : 0ul;
        if (j >= first && j < nvis) {
            s = (A16 ? attn_dot_a16(qr, K + at, hd) : attn_dot(qr, K + at, hd)) * scale;
        }
        const float nm = max(M, simd_max(s));
        const float corr = exp(M - nm);
        const float p = j >= first && j < nvis ? exp(s - nm) : 0.0f;
        S = S * corr + simd_sum(p);
        #pragma unroll
        for (uint i = 0; i < ATTN_MAX_HD / 32; i++) {
            acc[i] *= corr;
        }
        pws[lane] = p;
        simdgroup_barrier(mem_flags::mem_threadgroup);
        const uint nk = min(32u, nvis - jb);
        // (two instances, up to 64 and 128 dims: larger heads keep the loop
        // below, whose PTX each instance would about double)
        if (fc_paged_values == 2u && hd <= 128u) {
            if (hd <= 64u) {
                paged_values<T, 2>(acc, pws, V, at, nk, lane, hd);
            } else {
                paged_values<T, 4>(acc, pws, V, at, nk, lane, hd);
            }
            simdgroup_barrier(mem_flags::mem_threadgroup);
            M = nm;
            continue;
        }
        // loads of several keys in flight at once: the loop is the chain
        #pragma unroll 4
        for (uint k = 0; k < nk; k++) {
            const float pk = pws[k];
            const uint lo = simd_shuffle(uint(at & 0xffffffffu), ushort(k));
            const uint hi = simd_shuffle(uint(at >> 32), ushort(k));
            device const T* vr = V + (((ulong)hi << 32) | lo);
            #pragma unroll
            for (uint i = 0; i < ATTN_MAX_HD / 32; i++) {
                const uint d = lane + 32 * i;
                if (d < hd) {
                    acc[i] += pk * float(vr[d]);
                }
            }
        }
        simdgroup_barrier(mem_flags::mem_threadgroup);
        M = nm;
    }
    // the partials: a SIMD-group that had no tile leaves M = -inf, S = 0
    if (sg < ng) {
        if (lane == 0) {
            pm[sg] = M;
            psum[sg] = S;
        }
        #pragma unroll
        for (uint i = 0; i < ATTN_MAX_HD / 32; i++) {
            const uint d = lane + 32 * i;
            if (d < hd) {
                pacc[sg * ATTN_MAX_HD + d] = acc[i];
            }
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    // SIMD-group 0 walks the chunk's first tile, which holds a visible key
    // (the row's key first, or keys after it): mx is finite
    float mx = -INFINITY;
    for (uint g = 0; g < ng; g++) {
        mx = max(mx, pm[g]);
    }
    float sum = 0.0f;
    for (uint g = 0; g < ng; g++) {
        sum += psum[g] * exp(pm[g] - mx);
    }
    // one chunk: the output; several: this chunk's partial, unnormalised
    device float* part = scratch + ATTN_SCRATCH_HEAD + (ulong)((t * nHead + h) * ntgs.x) * (hd + 2);
    device float* dst = nc == 1 ? o : part + c * (hd + 2) + 2;
    const float inv = nc > 1 ? 1.0f : sum > 0.0f ? 1.0f / sum : 0.0f;
    for (uint d = tid; d < hd; d += nt) {
        float a = 0.0f;
        for (uint g = 0; g < ng; g++) {
            a += pacc[g * ATTN_MAX_HD + d] * exp(pm[g] - mx);
        }
        dst[d] = a * inv;
    }
    if (nc == 1) {
        return;
    }
    if (tid == 0) {
        part[c * (hd + 2)] = mx;
        part[c * (hd + 2) + 1] = sum;
    }
    device atomic_uint* word = tickets + (t * nHead + h);
    if (!group_ticket((device uint*)word, nc, &verdict, tid) || sg != 0) {
        return;
    }
    if (lane == 0) {
        atomic_store_explicit(word, 0u, memory_order_relaxed);
    }
    attn_ticket_merge(part, o, nc, hd, lane, pw);
}

typedef decltype(attention_paged<float>) attention_paged_f32_t;
typedef decltype(attention_paged<half>) attention_paged_f16_t;
typedef decltype(attention_paged<half, true>) attention_paged_f16_a16_t;
template [[host_name("attention_paged_f32")]] kernel attention_paged_f32_t attention_paged<float>;
template [[host_name("attention_paged_f16")]] kernel attention_paged_f16_t attention_paged<half>;
template [[host_name("attention_paged_f16_a16")]] kernel attention_paged_f16_a16_t attention_paged<half, true>;
