// Beam search's cache reorder (plan.BeamCopy), in place: sequence s's
// positions [pos0, pos0+n) become sequence src[s]'s. Thread (i, p) owns
// element i of position pos0+p in every sequence: it loads that element of
// each sequence, then stores the moved ones, so no thread reads what
// another writes and no barrier is needed. The elements are moved as bits
// (uint for f32, ushort for f16 and bf16): nothing is converted.

template <typename T>
static inline void beam_copy_body(device T* cache, device const int* src, constant Args& args, uint2 gid) {
    const uint width = args.beam_copy.width, n = args.beam_copy.n;
    const uint seqs = min(args.beam_copy.seqs, (uint)KBEAM_COPY_MAX_SEQS); // the host refuses more
    if (gid.x >= width || gid.y >= n) return;
    const ulong at = ((ulong)args.beam_copy.pos0 + gid.y) * args.beam_copy.pos_stride + gid.x;
    const ulong ss = args.beam_copy.seq_stride;
    T v[KBEAM_COPY_MAX_SEQS];
    for (uint s = 0; s < seqs; s++) v[s] = cache[s * ss + at];
    for (uint s = 0; s < seqs; s++) {
        const int f = src[s];
        if (f >= 0 && (uint)f < seqs && (uint)f != s) cache[s * ss + at] = v[f];
    }
}

kernel void beam_copy_4(device uint* cache [[buffer(0)]],
                        device const int* src [[buffer(1)]],
                        constant Args& args [[buffer(8)]],
                        uint2 gid [[thread_position_in_grid]]) {
    beam_copy_body(cache, src, args, gid);
}

kernel void beam_copy_2(device ushort* cache [[buffer(0)]],
                        device const int* src [[buffer(1)]],
                        constant Args& args [[buffer(8)]],
                        uint2 gid [[thread_position_in_grid]]) {
    beam_copy_body(cache, src, args, gid);
}
