// RopeAttentionMatVec (plan.RopeAttentionMatVec): decode's RopeAttention
// and its output product x += att·Woᵀ + bias in one launch (issue #34
// round 11: 4 launches a layer, not 5). Bindings: 0 qkv, 1 K, 2 V, 3 att,
// 4 freqs (RopeAttention's), 5 Wo (the dispatch's Type, n rows of n), 6
// out (x, added to), 7 bias; the params are RopeAttention's.
//
// rope_attention_mat_vec (_a16: the attention's K rows 16-byte aligned, as
// rope_attention_group_f16_a16): grid (S, nHead, 1), S the slices of Wo's
// rows (Tuning.AttnFoldSlices; round 11's form is S = 1). Each (slice,
// head) threadgroup runs rope_attention_group for its head, its SIMD-group
// chunks merged in threadgroup memory, so it holds its head's hd outputs:
// slice 0 stores them to att (and only it, chunk 0 of a KV head's first
// query head, the caches), the others to a row of their own in scratch,
// the same bits. The threadgroup has 16 SIMD-groups (ramvSIMDGroups),
// those past the chunks idle until the product.
// It multiplies them by its slice's rows of its head's n × hd column slice
// of Wo into a partial row (scratch), takes a ticket on its slice's word
// (group_ticket on word s), and the last head of the slice to arrive adds
// the slice's rows of the nHead partials in head order (a fixed order: the
// result does not depend on which head came last, nor on S), then the
// bias and out's residual, and resets the word. No threadgroup waits for
// another: only the last one reads what the others wrote. Why slices: one
// threadgroup a head left the product on nHead multiprocessors and the
// last head summing every row (round 11: 8% slower than two launches on
// an H200); a slice's threads hold a row or less each, and its sum is one
// round of loads. The launch rule picks it where the attention alone is
// one threadgroup a head (Tuning.AttnFoldO, and a cache of at most
// Tuning.AttnGroupKeys keys); longer caches run the attention's own
// launches, then rope_attention_mat_vec_o_*.
//
// Scratch (floats): ATTN_SCRATCH_HEAD, the slots of the S·nHead·nc
// SIMD-groups (3·hd each, ra_slot with the slice as its row), then nHead
// partial rows of n, then S - 1 rows of n (the other slices' att).

// ramv_partial writes head h's partial row: part[r] = Σ_{e<hd} W[r, h·hd+e]
// · att[h·hd+e] over the n rows, one row a thread, the head's columns as
// 16-element chunks of the row (chunks straddling the head's edges take
// the neighbours' columns times zero), xs the chunks' activations in
// threadgroup memory, zero past them to a whole block. A row's chunks are
// loaded RAMV_BLOCK at a time before any is used (a block past the head's
// last chunk re-reads that chunk, times zero): a chunk a step left a
// load's latency in each (the loop's bound is known only at run time).
enum : int { RAMV_BLOCK = 4 };

template <typename B>
static inline void ramv_partial(device const uchar* W, device const float* att, device float* part,
                                threadgroup float* xs, uint n, uint hd, uint h, uint r0, uint r1, uint tid,
                                uint ntg) {
    const int h0 = int(h * hd), h1 = int((h + 1) * hd);
    const int c0 = h0 & ~15, c1 = (h1 + 15) & ~15;
    const int nch = (c1 - c0) / 16;
    for (int i = int(tid); i < (nch + RAMV_BLOCK - 1) / RAMV_BLOCK * RAMV_BLOCK * 16; i += int(ntg)) {
        xs[i] = c0 + i >= h0 && c0 + i < h1 ? att[c0 + i] : 0.0f;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const ulong rb = row_bytes<B>(int(n));
    for (uint r = r0 + tid; r < r1; r += ntg) {
        device const B* wr = (device const B*)(W + ulong(r) * rb);
        float s = 0.0f;
        for (int b = 0; b < nch; b += RAMV_BLOCK) {
            float wv[RAMV_BLOCK][16];
            #pragma unroll
            for (int j = 0; j < RAMV_BLOCK; ++j) {
                load16(wr, c0 + 16 * min(b + j, nch - 1), int(n), wv[j]);
            }
            #pragma unroll
            for (int j = 0; j < RAMV_BLOCK; ++j) {
                threadgroup const float* xe = xs + 16 * (b + j);
                float d = 0.0f;
                #pragma unroll
                for (int i = 0; i < 16; ++i) d += wv[j][i] * xe[i];
                s += d;
            }
        }
        part[ulong(h) * n + r] = s;
    }
}

// ramv_finish: the last of the nHead threadgroups of a slice (its ticket
// word) sums the slice's rows [r0, r1) of the partial rows in head order,
// adds the bias and the residual, stores out and resets the word. A row's
// partials are loaded RAMV_HEADS at a time before they are added (in
// order): one round of loads for up to RAMV_HEADS heads.
enum : uint { RAMV_HEADS = 16 };

static inline void ramv_finish(device const float* part, device float* out, device const float* bias, bool hb,
                               device atomic_uint* ticket, uint n, uint nHead, uint r0, uint r1, uint tid,
                               uint ntg, threadgroup uint* verdict) {
    if (!group_ticket((device uint*)ticket, nHead, verdict, tid)) {
        return;
    }
    if (tid == 0) {
        atomic_store_explicit(ticket, 0u, memory_order_relaxed);
    }
    for (uint r = r0 + tid; r < r1; r += ntg) {
        float v = 0.0f;
        for (uint h = 0; h < nHead; h += RAMV_HEADS) {
            float p[RAMV_HEADS];
            #pragma unroll
            for (uint j = 0; j < RAMV_HEADS; ++j) {
                p[j] = part[ulong(min(h + j, nHead - 1)) * n + r];
            }
            #pragma unroll
            for (uint j = 0; j < RAMV_HEADS; ++j) {
                if (h + j < nHead) {
                    v += p[j];
                }
            }
        }
        if (hb) {
            v += bias[r];
        }
        out[r] = v + out[r];
    }
}

// fc_ramv_w: the weights' type and layout (RAMV_*, the launch rule's
// ramvLayouts): one entry for every weight type, since on CUDA each
// instance of this kernel carries the whole attention (~130 KB of PTX, the
// first JIT's time); the product's loop is the only part that differs.
constant uint fc_ramv_w [[function_constant(23)]];
enum : uint { RAMV_F32 = 0, RAMV_F16 = 1, RAMV_Q8_0 = 2, RAMV_Q4_0 = 3, RAMV_Q8_0_RP = 4, RAMV_Q4_0_RP = 5 };

template <bool A16 = false>
kernel void rope_attention_mat_vec(device const float* qkv [[buffer(0)]],
                                   device half* K [[buffer(1)]],
                                   device half* V [[buffer(2)]],
                                   device float* att [[buffer(3)]],
                                   device const float* freqs [[buffer(4)]],
                                   device const uchar* W [[buffer(5)]],
                                   device float* out [[buffer(6)]],
                                   device const float* bias [[buffer(7)]],
                                   constant Args& args [[buffer(8)]],
                                   device float* scratch [[buffer(10)]],
                                   device atomic_uint* tickets [[buffer(11)]],
                                   uint3 tg [[threadgroup_position_in_grid]],
                                   uint3 ntgs [[threadgroups_per_grid]],
                                   uint sg [[simdgroup_index_in_threadgroup]],
                                   uint nsg [[simdgroups_per_threadgroup]],
                                   uint lane [[thread_index_in_simdgroup]],
                                   uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float pw[32 * ATTN_GROUP_SG];
    threadgroup float gpart[ATTN_GROUP_SG * (ATTN_MAX_HD + 2)];
    threadgroup float tw[ATTN_GROUP_SG];
    threadgroup float xs[ATTN_MAX_HD + 16 * RAMV_BLOCK + 16]; // a head's chunks, whole blocks
    threadgroup uint verdict;
    // the chunks as rope_attention_group's (the launch rule's formula); the
    // SIMD-groups past them join the product only
    const uint nc = min(nsg, clamp((args.attend.kv_len + 31u) / 32u, 2u, (uint)ATTN_GROUP_SG));
    const uint hd = args.attend.head_dim;
    const uint nHead = args.attend.n_head;
    const uint n = nHead * hd;
    const uint ntg = 32 * nsg;
    if (args.attend.m == 0u) {
        return; // (no barrier follows)
    }
    const uint ns = ntgs.x; // the slices
    const uint s = tg.x;
    // the slice's rows of Wo
    const uint rs = (n + ns - 1) / ns;
    const uint r0 = min(n, s * rs), r1 = min(n, r0 + rs);
    device float* part = scratch + ATTN_SCRATCH_HEAD + (ulong)ns * nHead * nc * (3 * hd);
    // slice 0's outputs are att; the others' a row each after the partials
    device float* ao = s == 0u ? att : part + (ulong)nHead * n + (ulong)(s - 1u) * n;
    if (sg < nc) {
        device float* slot = ra_slot(scratch, args, s, tg.y, sg, nc, false);
        // chunk index s·nc + sg: only slice 0's chunk 0 stores the caches
        ra_prologue<half>(qkv, freqs, K, V, slot, args, 0, tg.y, s * nc + sg, lane);
        attention_impl<half, true, true, A16>(qkv, K, V, att, att, att, args, uint3(sg, tg.y, 0), uint3(nc, 1, 1), 0,
                                              1, lane, pw + 32 * sg, gpart, slot, (device const half*)(slot + hd),
                                              (device const half*)(slot + 2 * hd));
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (nc > 1) {
        attn_combine_tg(gpart, nc, hd, ao + tg.y * hd, tid, ntg, tw);
    }
    threadgroup_barrier(mem_flags::mem_device); // the head's outputs, stored by its threads, for all of them
    switch (fc_ramv_w) { // (one value for the whole launch: the barrier inside is reached by all)
    case RAMV_F16:
        ramv_partial<w_f16>(W, ao, part, xs, n, hd, tg.y, r0, r1, tid, ntg);
        break;
    case RAMV_Q8_0:
        ramv_partial<block_q8_0>(W, ao, part, xs, n, hd, tg.y, r0, r1, tid, ntg);
        break;
    case RAMV_Q4_0:
        ramv_partial<block_q4_0>(W, ao, part, xs, n, hd, tg.y, r0, r1, tid, ntg);
        break;
    case RAMV_Q8_0_RP:
        ramv_partial<rp_q8_0>(W, ao, part, xs, n, hd, tg.y, r0, r1, tid, ntg);
        break;
    case RAMV_Q4_0_RP:
        ramv_partial<rp_q4_0>(W, ao, part, xs, n, hd, tg.y, r0, r1, tid, ntg);
        break;
    default:
        ramv_partial<w_f32>(W, ao, part, xs, n, hd, tg.y, r0, r1, tid, ntg);
        break;
    }
    ramv_finish(part, out, bias, has_bind(args, ROPE_ATTENTION_MAT_VEC_BIAS), tickets + s, n, nHead, r0, r1, tid, ntg,
                &verdict);
}

typedef decltype(rope_attention_mat_vec<false>) rope_attention_mat_vec_t;
template [[host_name("rope_attention_mat_vec")]] kernel rope_attention_mat_vec_t rope_attention_mat_vec<false>;
template [[host_name("rope_attention_mat_vec_a16")]] kernel rope_attention_mat_vec_t rope_attention_mat_vec<true>;

// rope_attention_mat_vec_o_*: the output product alone, after the
// attention's own launches (the fold off, or a cache past one threadgroup
// a head): mat_vec's body over this layout, out = att·Woᵀ + bias + out,
// with mat_vec's geometry and function constants.
// mv_attend_o_shape is the output product's shape: Wo is n_head·head_dim
// square, one row (rope_attention_mat_vec_o and its _q8x).
static inline __attribute__((always_inline)) mv_shape mv_attend_o_shape(constant Args& args) {
    mv_shape sh;
    sh.n = int(args.attend.n_head * args.attend.head_dim);
    sh.k = sh.n;
    sh.m = min(int(args.attend.m), 1);
    sh.ldx = sh.n;
    sh.ldo = sh.n;
    sh.ldr = sh.n;
    sh.ld2 = 0;
    sh.eps = 0.0f;
    sh.hb = has_bind(args, ROPE_ATTENTION_MAT_VEC_BIAS);
    sh.hr = true;
    sh.ge = false;
    return sh;
}

template <typename B>
kernel void rope_attention_mat_vec_o(device const uchar* W [[buffer(5)]],
                                     device const float* att [[buffer(3)]],
                                     device float* out [[buffer(6)]],
                                     device const float* bias [[buffer(7)]],
                                     constant Args& args [[buffer(8)]],
                                     uint3 tgpig [[threadgroup_position_in_grid]],
                                     uint sgitg [[simdgroup_index_in_threadgroup]],
                                     uint nsg [[simdgroups_per_threadgroup]],
                                     uint lane [[thread_index_in_simdgroup]]) {
    mat_vec_body<B, MV_PLAIN>(W, att, out, bias, out, att, mv_attend_o_shape(args), tgpig, sgitg, nsg, lane);
}

// rope_attention_mat_vec_o_*_q8x: the same product of q8_0 or q4_0
// weights on 8-bit activations (matvec_q8.metal; Tuning.MatVecQ8K), with
// its geometry: att quantized once per threadgroup.
template <typename B>
kernel void rope_attention_mat_vec_o_q8x(device const uchar* W [[buffer(5)]],
                                         device const float* att [[buffer(3)]],
                                         device float* out [[buffer(6)]],
                                         device const float* bias [[buffer(7)]],
                                         constant Args& args [[buffer(8)]],
                                         uint3 tgpig [[threadgroup_position_in_grid]],
                                         uint3 ntgs [[threadgroups_per_grid]],
                                         uint sgitg [[simdgroup_index_in_threadgroup]],
                                         uint nsg [[simdgroups_per_threadgroup]],
                                         uint lane [[thread_index_in_simdgroup]]) {
    threadgroup uint4 qx[MQ_MAX_K / 16];
    threadgroup float dx[MQ_MAX_K / 32];
    threadgroup int sx[MQ_MAX_K / 32];
    threadgroup float tss[32];
    mv_shape sh = mv_attend_o_shape(args);
    sh.k = min(sh.k, MQ_MAX_K);
    if (int(tgpig.y) >= sh.m) return;
    mat_vec_q8x_body<B, MV_PLAIN>(W, att, out, bias, out, att, sh, tgpig, ntgs.x, sgitg, nsg, lane, qx, dx, sx, tss);
}

typedef decltype(rope_attention_mat_vec_o_q8x<rp_q8_0>) rope_attention_mat_vec_o_q8x_t;
template [[host_name("rope_attention_mat_vec_o_q8_0_q8x")]] kernel rope_attention_mat_vec_o_q8x_t
    rope_attention_mat_vec_o_q8x<block_q8_0>;
template [[host_name("rope_attention_mat_vec_o_q4_0_q8x")]] kernel rope_attention_mat_vec_o_q8x_t
    rope_attention_mat_vec_o_q8x<block_q4_0>;
template [[host_name("rope_attention_mat_vec_o_q8_0_q8x_rp")]] kernel rope_attention_mat_vec_o_q8x_t
    rope_attention_mat_vec_o_q8x<rp_q8_0>;
template [[host_name("rope_attention_mat_vec_o_q4_0_q8x_rp")]] kernel rope_attention_mat_vec_o_q8x_t
    rope_attention_mat_vec_o_q8x<rp_q4_0>;

typedef decltype(rope_attention_mat_vec_o<w_f32>) rope_attention_mat_vec_o_t;
template [[host_name("rope_attention_mat_vec_o_f32")]] kernel rope_attention_mat_vec_o_t
    rope_attention_mat_vec_o<w_f32>;
template [[host_name("rope_attention_mat_vec_o_f16")]] kernel rope_attention_mat_vec_o_t
    rope_attention_mat_vec_o<w_f16>;
template [[host_name("rope_attention_mat_vec_o_f16_a16")]] kernel rope_attention_mat_vec_o_t
    rope_attention_mat_vec_o<a16_f16>;
template [[host_name("rope_attention_mat_vec_o_q8_0")]] kernel rope_attention_mat_vec_o_t
    rope_attention_mat_vec_o<block_q8_0>;
template [[host_name("rope_attention_mat_vec_o_q4_0")]] kernel rope_attention_mat_vec_o_t
    rope_attention_mat_vec_o<block_q4_0>;
template [[host_name("rope_attention_mat_vec_o_q8_0_rp")]] kernel rope_attention_mat_vec_o_t
    rope_attention_mat_vec_o<rp_q8_0>;
template [[host_name("rope_attention_mat_vec_o_q4_0_rp")]] kernel rope_attention_mat_vec_o_t
    rope_attention_mat_vec_o<rp_q4_0>;
