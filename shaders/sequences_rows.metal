// attention_paged_rows_{f32,f16} (args.attention_paged): attention_paged
// for steps that carry prompt chunks. The rows of a chunk are one sequence
// at consecutive positions, so they read the same keys: a tile of
// APR_ROWS consecutive rows whose tables agree (each row's blocks up to
// its position equal the tile's last row's) shares every key's table
// lookup and every K and V load, each lane's key scored against all the
// tile's queries, instead of each (head, row) walking up to the whole
// cache on its own (issue #38: a 4,000-token prompt's 128-row step took
// ~45 ms, most of it that walk).
//
// Grid: (APR_ROWS, nHead, ceil(m / APR_ROWS)); threads: 32 per SIMD-group,
// ATTN_PAGED_MAX_SG SIMD-groups. Threadgroup (s, h, z) covers rows
// z*APR_ROWS .. +APR_ROWS-1 of head h: s = 0 computes the rows that agree
// with the last one (SIMD-group g walks the 32-key tiles g, g+n, ... for
// all of them, the partials merged per row at the end); s > 0 computes
// row s alone, as attention_paged does, when it does not agree (a decode
// row beside a chunk, a row with a bad table), and otherwise returns at
// once. Every threadgroup of a tile decides the same membership from the
// same data.
enum : uint {
    APR_ROWS = 8,
};

// paged_rows_agree reports whether row r's position and blocks are sound
// and its table equals row l's over every block row r reaches (every lane
// gets the answer).
static inline bool paged_rows_agree(device const int* pos, device const int* table, uint r, uint l, uint bs,
                                    uint ts, uint nBlocks, uint lane) {
    if (!paged_row_ok_simd(pos, table, r, bs, ts, nBlocks, lane) ||
        !paged_row_ok_simd(pos, table, l, bs, ts, nBlocks, lane)) {
        return false;
    }
    uint bad = 0u;
    for (uint i = lane; i <= uint(pos[r]) / bs; i += 32u) {
        if (table[(ulong)r * ts + i] != table[(ulong)l * ts + i]) {
            bad = 1u;
        }
    }
    return simd_or(bad) == 0u;
}

template <typename T>
kernel void attention_paged_rows(device const float* q [[buffer(0)]],
                                 device const T* K [[buffer(1)]],
                                 device const T* V [[buffer(2)]],
                                 device float* out [[buffer(3)]],
                                 device const int* pos [[buffer(4)]],
                                 device const int* table [[buffer(5)]],
                                 constant Args& args [[buffer(8)]],
                                 uint3 tg [[threadgroup_position_in_grid]],
                                 uint tid [[thread_index_in_threadgroup]],
                                 uint lane [[thread_index_in_simdgroup]],
                                 uint sg [[simdgroup_index_in_threadgroup]],
                                 uint nsg [[simdgroups_per_threadgroup]]) {
    threadgroup float pw[ATTN_PAGED_MAX_SG * APR_ROWS * 32];
    threadgroup float pm[ATTN_PAGED_MAX_SG];
    threadgroup float psum[ATTN_PAGED_MAX_SG];
    threadgroup float pacc[ATTN_PAGED_MAX_SG * ATTN_MAX_HD];
    threadgroup float qs[APR_ROWS * ATTN_MAX_HD];
    threadgroup uint member[APR_ROWS];
    threadgroup uint span[2 * APR_ROWS];
    const uint m = args.attention_paged.m;
    const uint hd = args.attention_paged.head_dim;
    const uint nHead = args.attention_paged.n_head;
    const uint bs = args.attention_paged.block_size;
    const uint ts = args.attention_paged.table_stride;
    const uint h = tg.y;
    const uint t0 = tg.z * APR_ROWS;
    const uint n = min((uint)APR_ROWS, m - t0);
    const uint last = t0 + n - 1u;
    const uint w = args.attention_paged.window;
    // membership: SIMD-group g checks row t0+g (the launch has
    // ATTN_PAGED_MAX_SG = APR_ROWS SIMD-groups), with the row's key span
    if (sg < n) {
        const bool in = paged_rows_agree(pos, table, t0 + sg, last, bs, ts, args.attention_paged.n_blocks, lane);
        if (lane == 0) {
            member[sg] = in ? 1u : 0u;
            const uint qp = in ? uint(pos[t0 + sg]) : 0u;
            span[sg] = (w == 0u || qp + 1u <= w) ? 0u : qp + 1u - w;
            span[APR_ROWS + sg] = qp + 1u;
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tg.x > 0u) {
        if (tg.x < n && member[tg.x] == 0u) {
            paged_attend_row<T>(q, K, V, out, pos, table, args, h, t0 + tg.x, tid, lane, sg, nsg, pw, pm, psum, pacc);
        }
        return;
    }
    if (member[0] == 0u) {
        // row t0 is not a member: it is threadgroup 0's to compute alone
        paged_attend_row<T>(q, K, V, out, pos, table, args, h, t0, tid, lane, sg, nsg, pw, pm, psum, pacc);
    }
    // the members' key span and queries (a non-member's slot: zeros)
    uint lo = 0xffffffffu;
    uint hi = 0u;
    for (uint r = 0; r < n; r++) {
        if (member[r] != 0u) {
            lo = min(lo, span[r] & ~31u);
            hi = max(hi, span[APR_ROWS + r]);
        }
    }
    if (hi == 0u) {
        return; // no member (the last row's table is bad)
    }
    for (uint i = tid; i < APR_ROWS * hd; i += nsg * 32) {
        const uint r = i / hd;
        qs[r * ATTN_MAX_HD + i % hd] =
            r < n && member[r] != 0u ? q[(ulong)(t0 + r) * args.attention_paged.ldq + h * hd + i % hd] : 0.0f;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const ulong bstride = args.attention_paged.block_stride;
    const ulong hs = args.attention_paged.head_stride;
    const ulong ps = args.attention_paged.pos_stride;
    const float scale = args.attention_paged.scale;
    const uint kvh = h / (nHead / args.attention_paged.nkv);
    const uint ng = min(nsg, (uint)ATTN_PAGED_MAX_SG);
    threadgroup float* pws = pw + (sg % ATTN_PAGED_MAX_SG) * APR_ROWS * 32;
    float acc[APR_ROWS][ATTN_MAX_HD / 32];
    float M[APR_ROWS];
    float S[APR_ROWS];
    #pragma unroll
    for (uint r = 0; r < APR_ROWS; r++) {
        M[r] = -INFINITY;
        S[r] = 0.0f;
        #pragma unroll
        for (uint i = 0; i < ATTN_MAX_HD / 32; i++) {
            acc[r][i] = 0.0f;
        }
    }
    for (uint jb = lo + 32u * sg; sg < ng && jb < hi; jb += 32u * ng) {
        const uint j = jb + lane;
        // one table lookup and one K row a lane, scored against every row
        const ulong at = j < hi ? paged_at(table, last, ts, bs, bstride, hs, ps, kvh, j) : 0ul;
        float s[APR_ROWS];
        #pragma unroll
        for (uint r = 0; r < APR_ROWS; r++) {
            s[r] = 0.0f;
        }
        if (j < hi) {
            device const T* kr = K + at;
            for (uint d = 0; d < hd; d++) {
                const float kd = float(kr[d]);
                #pragma unroll
                for (uint r = 0; r < APR_ROWS; r++) {
                    s[r] += qs[r * ATTN_MAX_HD + d] * kd;
                }
            }
        }
        #pragma unroll
        for (uint r = 0; r < APR_ROWS; r++) {
            const bool vis = r < n && member[r] != 0u && j >= span[r] && j < span[APR_ROWS + r];
            const float sr = vis ? s[r] * scale : -INFINITY;
            const float nm = max(M[r], simd_max(sr));
            // a row none of whose keys were seen yet stays at -inf
            const float corr = nm == -INFINITY ? 1.0f : exp(M[r] - nm);
            const float p = vis ? exp(sr - nm) : 0.0f;
            S[r] = S[r] * corr + simd_sum(p);
            #pragma unroll
            for (uint i = 0; i < ATTN_MAX_HD / 32; i++) {
                acc[r][i] *= corr;
            }
            pws[r * 32 + lane] = p;
            M[r] = nm;
        }
        simdgroup_barrier(mem_flags::mem_threadgroup);
        const uint nk = min(32u, hi - jb);
        for (uint k = 0; k < nk; k++) {
            const uint alo = simd_shuffle(uint(at & 0xffffffffu), ushort(k));
            const uint ahi = simd_shuffle(uint(at >> 32), ushort(k));
            device const T* vr = V + (((ulong)ahi << 32) | alo);
            float v[ATTN_MAX_HD / 32];
            #pragma unroll
            for (uint i = 0; i < ATTN_MAX_HD / 32; i++) {
                const uint d = lane + 32 * i;
                v[i] = d < hd ? float(vr[d]) : 0.0f;
            }
            #pragma unroll
            for (uint r = 0; r < APR_ROWS; r++) {
                const float pk = pws[r * 32 + k];
                #pragma unroll
                for (uint i = 0; i < ATTN_MAX_HD / 32; i++) {
                    acc[r][i] += pk * v[i];
                }
            }
        }
        simdgroup_barrier(mem_flags::mem_threadgroup);
    }
    // merge each member row's partials (a SIMD-group that saw none of its
    // keys left M = -inf, S = 0)
    #pragma unroll
    for (uint r = 0; r < APR_ROWS; r++) {
        if (r >= n || member[r] == 0u) {
            continue;
        }
        if (sg < ng) {
            if (lane == 0) {
                pm[sg] = M[r];
                psum[sg] = S[r];
            }
            #pragma unroll
            for (uint i = 0; i < ATTN_MAX_HD / 32; i++) {
                const uint d = lane + 32 * i;
                if (d < hd) {
                    pacc[sg * ATTN_MAX_HD + d] = acc[r][i];
                }
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        float mx = -INFINITY;
        for (uint g = 0; g < ng; g++) {
            mx = max(mx, pm[g]);
        }
        float sum = 0.0f;
        for (uint g = 0; g < ng; g++) {
            sum += pm[g] == -INFINITY ? 0.0f : psum[g] * exp(pm[g] - mx);
        }
        const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
        device float* o = out + (ulong)(t0 + r) * args.attention_paged.ldo + h * hd;
        for (uint d = tid; d < hd; d += nsg * 32) {
            float a = 0.0f;
            for (uint g = 0; g < ng; g++) {
                a += pm[g] == -INFINITY ? 0.0f : pacc[g * ATTN_MAX_HD + d] * exp(pm[g] - mx);
            }
            o[d] = a * inv;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
}

typedef decltype(attention_paged_rows<float>) attention_paged_rows_f32_t;
typedef decltype(attention_paged_rows<half>) attention_paged_rows_f16_t;
template [[host_name("attention_paged_rows_f32")]] kernel attention_paged_rows_f32_t attention_paged_rows<float>;
template [[host_name("attention_paged_rows_f16")]] kernel attention_paged_rows_f16_t attention_paged_rows<half>;
