// embed: out[t, :] (+)= table[ids[t], :] (+ add[t*lda, :] where add is
// bound: Whisper's positional embedding, no launch of its own) for every
// table type. One
// threadgroup per token; its threads stride over 16-element chunks of the
// row (load16 in common.metal), so quantised rows are decoded block by block.
// Negative ids are skipped; ids past the table's rows cannot be seen here
// (the kernel has no table length): the host validates them, as the CPU
// backend does.
//
// Bindings: 0 table, 1 ids (i32), 2 out, 3 add (optional). P: 0 dim, 1 n,
// 2 ldo, 3 flags (bit0: accumulate), 4 lda (0: add's first row for every
// token). Grid (n), any multiple of 32 threads.
template <typename B>
kernel void embed_impl(
        device const uchar* table [[buffer(0)]],
        device const int* ids [[buffer(1)]],
        device float* out [[buffer(2)]],
        device const float* add [[buffer(3)]],
        constant Args& args [[buffer(8)]],
        uint3 tgpig [[threadgroup_position_in_grid]],
        uint tiitg [[thread_index_in_threadgroup]],
        uint ntg [[threads_per_threadgroup]]) {
    const int dim = int(args.embed.dim), n = int(args.embed.n), ldo = int(args.embed.ldo);
    const bool acc = (args.embed.flags & KFLAG_ACCUMULATE) != 0;
    const bool ha = has_bind(args, EMBED_ADD);
    const int t = int(tgpig.x);
    if (t >= n) return;
    const int id = ids[t];
    if (id < 0) return;
    device const B* row = (device const B*)(table + ulong(id) * row_bytes<B>(dim));
    device float* o = out + t * ldo;
    const int arow = t * int(args.embed.lda);
    const int nc = (dim + 15) / 16;
    for (int c = int(tiitg); c < nc; c += int(ntg)) {
        float v[16];
        load16(row, 16 * c, dim, v);
        const int cnt = min(16, dim - 16 * c);
        device float* oc = o + 16 * c;
        // the CPU's order: the row (added to out), then add
        for (int i = 0; i < cnt; ++i) {
            float y = acc ? oc[i] + v[i] : v[i];
            if (ha) y += add[arow + 16 * c + i];
            oc[i] = y;
        }
    }
}

typedef decltype(embed_impl<w_f32>) embed_t;

template [[host_name("embed_f32")]] kernel embed_t embed_impl<w_f32>;
template [[host_name("embed_f16")]] kernel embed_t embed_impl<w_f16>;
template [[host_name("embed_bf16")]] kernel embed_t embed_impl<w_bf16>;
template [[host_name("embed_q4_0")]] kernel embed_t embed_impl<block_q4_0>;
template [[host_name("embed_q4_1")]] kernel embed_t embed_impl<block_q4_1>;
template [[host_name("embed_q5_0")]] kernel embed_t embed_impl<block_q5_0>;
template [[host_name("embed_q5_1")]] kernel embed_t embed_impl<block_q5_1>;
template [[host_name("embed_q8_0")]] kernel embed_t embed_impl<block_q8_0>;
template [[host_name("embed_q2_k")]] kernel embed_t embed_impl<block_q2_k>;
template [[host_name("embed_q3_k")]] kernel embed_t embed_impl<block_q3_k>;
template [[host_name("embed_q4_k")]] kernel embed_t embed_impl<block_q4_k>;
template [[host_name("embed_q5_k")]] kernel embed_t embed_impl<block_q5_k>;
template [[host_name("embed_q6_k")]] kernel embed_t embed_impl<block_q6_k>;
template [[host_name("embed_iq4_nl")]] kernel embed_t embed_impl<block_iq4_nl>;
template [[host_name("embed_q8_0_rp")]] kernel embed_t embed_impl<rp_q8_0>;
template [[host_name("embed_q4_0_rp")]] kernel embed_t embed_impl<rp_q4_0>;
