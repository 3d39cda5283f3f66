// RopeAttention (plan.RopeAttention): rope_kv and decode attention in one
// launch (issue #34: one launch a layer fewer). Each SIMD-group of an
// attention kernel (attention.metal: attention_impl with RK) first writes,
// into its own slot of the dispatch scratch, its query head rotated and
// its row's new K (rotated) and V, as rope_kv computes them (rope.metal's
// rope_angle_cs, the same operations in the same order, but the GPU's
// sin/cos approximations; every SIMD-group gets the same bits), and reads
// the new key from there rather than from the caches. One
// SIMD-group per row and KV head, chunk 0 of the KV head's first query
// head, stores K and V into the caches; no SIMD-group of the launch reads
// that position from them, so there is no ordering between threadgroups
// to wait for. The qkv rows are only read.
//
// Scratch (floats): ATTN_SCRATCH_HEAD, the split's partials when the
// launch has several chunk threadgroups (as attention's), then a slot of
// 3·hd per (row, head, chunk): q (f32), then K and V as T.

// ra_slot is SIMD-group (t, h, c)'s slot; split: chunks are threadgroups
// with partials before the slots (attention_merge reads those).
static inline device float* ra_slot(device float* scratch, constant Args& args, uint t, uint h, uint c, uint nc,
                                    bool split) {
    const uint hd = args.attend.head_dim;
    const uint nHead = args.attend.n_head;
    const ulong parts = split ? (ulong)args.attend.m * nHead * nc * (hd + 2) : 0ul;
    return scratch + ATTN_SCRATCH_HEAD + parts + (ulong)((t * nHead + h) * nc + c) * (3 * hd);
}

// ra_prologue fills SIMD-group (row t, head h, chunk c)'s slot and, for
// chunk 0 of the first query head of a KV head, the caches at the row's
// position; the lanes share the dims, and a SIMD-group barrier makes the
// slot visible to all of them.
template <typename T>
static inline void ra_prologue(device const float* qkv, device const float* freqs, device T* kc, device T* vc,
                               device float* slot, constant Args& args, uint t, uint h, uint c, uint lane) {
    const uint hd = args.attend.head_dim;
    const uint nHead = args.attend.n_head;
    const uint nKV = args.attend.nkv;
    const bool perSeq = (args.attend.flags & KFLAG_PER_SEQ_ROWS) != 0;
    const uint pos = perSeq ? args.attend.pos0 : args.attend.pos0 + t;
    const uint seq = perSeq ? t : 0u;
    const uint kvh = h / (nHead / nKV);
    device const float* row = qkv + (ulong)t * args.attend.ldq;
    device const float* qs = row + h * hd;
    device const float* ks = row + (nHead + kvh) * hd;
    device const float* vs = row + (nHead + nKV + kvh) * hd;
    device T* kn = (device T*)(slot + hd);
    device T* vn = (device T*)(slot + 2 * hd);
    const bool store = c == 0u && h % (nHead / nKV) == 0u;
    const ulong dst = (ulong)seq * args.attend.seq_stride + (ulong)kvh * args.attend.head_stride +
                      (ulong)pos * args.attend.pos_stride;
    device T* kd = kc + dst;
    device T* vd = vc + dst;
    const uint rd = args.rope_attention.rope_dim == 0 ? hd : args.rope_attention.rope_dim;
    const uint half_ = has_bind(args, ROPE_ATTENTION_FREQS) ? rd / 2 : 0u; // no freqs: no rotation
    const bool neox = args.rope_attention.mode == KROPE_NEOX;
    for (uint i = lane; i < half_; i += 32) {
        // rope_kv's angle (times its m_scale, 1 here), the sin/cos the GPU's
        // approximations: K rounds to f16 (TestRopeAttentionKernel)
        const float2 cs = rope_angle_cs<true>(pos, freqs[i]);
        const uint ia = neox ? i : 2 * i;
        const uint ib = neox ? i + half_ : 2 * i + 1;
        const float qa = qs[ia], qb = qs[ib], ka = ks[ia], kb = ks[ib];
        slot[ia] = qa * cs.x - qb * cs.y;
        slot[ib] = qa * cs.y + qb * cs.x;
        const T ra = T(ka * cs.x - kb * cs.y);
        const T rb = T(ka * cs.y + kb * cs.x);
        kn[ia] = ra;
        kn[ib] = rb;
        if (store) {
            kd[ia] = ra;
            kd[ib] = rb;
        }
    }
    for (uint i = 2 * half_ + lane; i < hd; i += 32) { // dims past the rotated ones
        slot[i] = qs[i];
        kn[i] = T(ks[i]);
        if (store) {
            kd[i] = T(ks[i]);
        }
    }
    for (uint i = lane; i < hd; i += 32) {
        vn[i] = T(vs[i]);
        if (store) {
            vd[i] = T(vs[i]);
        }
    }
    simdgroup_barrier(mem_flags::mem_device);
}

// rope_attention_{f32,f16}: attention's grid (chunks, nHead, rows), each
// SIMD-group's prologue first; a split's partials go to attention_merge
// (its rope_attention_merge instance). A16 (rope_attention_f16_a16): the
// K rows and the slots 16-byte aligned (attention_impl; the launch rule
// picks it only without a split, whose partials would offset the slots).
template <typename T, bool A16 = false>
kernel void rope_attention(device const float* qkv [[buffer(0)]],
                           device T* K [[buffer(1)]],
                           device T* V [[buffer(2)]],
                           device float* out [[buffer(3)]],
                           device const float* freqs [[buffer(4)]],
                           constant Args& args [[buffer(8)]],
                           device float* scratch [[buffer(10)]],
                           uint3 tg [[threadgroup_position_in_grid]],
                           uint3 ntgs [[threadgroups_per_grid]],
                           uint sg [[simdgroup_index_in_threadgroup]],
                           uint nsg [[simdgroups_per_threadgroup]],
                           uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float pw[32 * 32]; // 32 key weights per SIMD-group
    const uint t = tg.z * nsg + sg;
    if (t >= args.attend.m) {
        return; // (no barrier follows)
    }
    device float* slot = ra_slot(scratch, args, t, tg.y, tg.x, ntgs.x, ntgs.x > 1);
    ra_prologue<T>(qkv, freqs, K, V, slot, args, t, tg.y, tg.x, lane);
    attention_impl<T, false, true, A16>(qkv, K, V, out, out, scratch, args, tg, ntgs, sg, nsg, lane, pw + 32 * sg, pw,
                                        slot, (device const T*)(slot + args.attend.head_dim),
                                        (device const T*)(slot + 2 * args.attend.head_dim));
}

typedef decltype(rope_attention<float>) rope_attention_f32_t;
typedef decltype(rope_attention<half>) rope_attention_f16_t;
typedef decltype(rope_attention<half, true>) rope_attention_f16_a16_t;
template [[host_name("rope_attention_f32")]] kernel rope_attention_f32_t rope_attention<float>;
template [[host_name("rope_attention_f16")]] kernel rope_attention_f16_t rope_attention<half>;
template [[host_name("rope_attention_f16_a16")]] kernel rope_attention_f16_a16_t rope_attention<half, true>;

// rope_attention_ticket_{f32,f16}: rope_attention's split, one SIMD-group
// a threadgroup, merged by the last chunk of each (row, head) to finish
// (attn_ticket in attention.metal), not by rope_attention_merge.
template <typename T>
kernel void rope_attention_ticket(device const float* qkv [[buffer(0)]],
                                  device T* K [[buffer(1)]],
                                  device T* V [[buffer(2)]],
                                  device float* out [[buffer(3)]],
                                  device const float* freqs [[buffer(4)]],
                                  constant Args& args [[buffer(8)]],
                                  device float* scratch [[buffer(10)]],
                                  device atomic_uint* tickets [[buffer(11)]],
                                  uint3 tg [[threadgroup_position_in_grid]],
                                  uint3 ntgs [[threadgroups_per_grid]],
                                  uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float pw[32];
    threadgroup float merge[3 * ATTN_TICKET_W];
    threadgroup uint verdict;
    device float* slot = ra_slot(scratch, args, tg.z, tg.y, tg.x, ntgs.x, true);
    ra_prologue<T>(qkv, freqs, K, V, slot, args, tg.z, tg.y, tg.x, lane);
    attention_impl<T, false, true>(qkv, K, V, out, out, scratch, args, tg, ntgs, 0, 1, lane, pw, pw, slot,
                                   (device const T*)(slot + args.attend.head_dim),
                                   (device const T*)(slot + 2 * args.attend.head_dim));
    attn_ticket(scratch, out, tickets, args, tg.z, tg.y, ntgs.x, lane, merge, &verdict);
}

typedef decltype(rope_attention_ticket<float>) rope_attention_ticket_f32_t;
typedef decltype(rope_attention_ticket<half>) rope_attention_ticket_f16_t;
template [[host_name("rope_attention_ticket_f32")]] kernel rope_attention_ticket_f32_t rope_attention_ticket<float>;
template [[host_name("rope_attention_ticket_f16")]] kernel rope_attention_ticket_f16_t rope_attention_ticket<half>;

// rope_attention_group_f16: attention_group's split merged in one
// threadgroup (grid (1, nHead, m)), each SIMD-group's prologue first; A16
// (rope_attention_group_f16_a16) as rope_attention's.
template <typename T, bool A16 = false>
kernel void rope_attention_group(device const float* qkv [[buffer(0)]],
                                 device T* K [[buffer(1)]],
                                 device T* V [[buffer(2)]],
                                 device float* out [[buffer(3)]],
                                 device const float* freqs [[buffer(4)]],
                                 constant Args& args [[buffer(8)]],
                                 device float* scratch [[buffer(10)]],
                                 uint3 tg [[threadgroup_position_in_grid]],
                                 uint sg [[simdgroup_index_in_threadgroup]],
                                 uint nsg [[simdgroups_per_threadgroup]],
                                 uint lane [[thread_index_in_simdgroup]],
                                 uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float pw[32 * ATTN_GROUP_SG];
    threadgroup float gpart[ATTN_GROUP_SG * (ATTN_MAX_HD + 2)];
    threadgroup float tw[ATTN_GROUP_SG];
    const uint nc = min(nsg, (uint)ATTN_GROUP_SG);
    const uint hd = args.attend.head_dim;
    if (sg < nc && tg.z < args.attend.m) {
        device float* slot = ra_slot(scratch, args, tg.z, tg.y, sg, nc, false);
        ra_prologue<T>(qkv, freqs, K, V, slot, args, tg.z, tg.y, sg, lane);
        attention_impl<T, true, true, A16>(qkv, K, V, out, out, out, args, uint3(sg, tg.y, tg.z), uint3(nc, 1, 1), 0,
                                           1, lane, pw + 32 * sg, gpart, slot, (device const T*)(slot + hd),
                                           (device const T*)(slot + 2 * hd));
    }
    if (nc < 2 || tg.z >= args.attend.m) {
        return; // one chunk wrote its row; (no barrier follows for a row past m either)
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    device float* o = out + (ulong)tg.z * args.attend.ldo + tg.y * hd;
    attn_combine_tg(gpart, nc, hd, o, tid, 32 * nsg, tw);
}

typedef decltype(rope_attention_group<half>) rope_attention_group_f16_t;
typedef decltype(rope_attention_group<half, true>) rope_attention_group_f16_a16_t;
template [[host_name("rope_attention_group_f16")]] kernel rope_attention_group_f16_t rope_attention_group<half>;
template [[host_name("rope_attention_group_f16_a16")]] kernel rope_attention_group_f16_a16_t
    rope_attention_group<half, true>;
