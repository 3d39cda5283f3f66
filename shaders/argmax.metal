// Two-stage argmax (plan.Argmax): argmax_partial reduces each segment of a
// row to (value, index) in scratch, argmax_reduce reduces a row's segments.
// Ties go to the lowest index and NaNs never win (an all-NaN row gives 0),
// as the CPU's argmaxRow. NaN is tested on the bits: fast math may fold
// v != v away.
//
// Scratch: word 0 the segment count (for argmax_reduce), word 1 unused,
// then per (row, segment) two words, the value and the index (−1 when the
// segment held only NaNs).

static inline bool amx_isnan(float v) { return (as_type<uint>(v) & 0x7fffffffu) > 0x7f800000u; }

// amx_better reports whether candidate (v, i) beats (bv, bi); index −1 is
// "no candidate".
static inline bool amx_better(float v, int i, float bv, int bi) {
    if (i < 0) {
        return false;
    }
    if (bi < 0) {
        return true;
    }
    return v > bv || (v == bv && i < bi);
}

// amx_tg_reduce reduces (v, i) over the threadgroup; every thread gets the
// result. buf holds two words per SIMD-group.
static inline void amx_tg_reduce(thread float& v, thread int& i, threadgroup float* bv, threadgroup int* bi,
                                 uint lane, uint sg, uint nsg) {
    for (ushort off = 16; off > 0; off >>= 1) {
        const float ov = simd_shuffle_xor(v, off);
        const int oi = simd_shuffle_xor(i, off);
        if (amx_better(ov, oi, v, i)) {
            v = ov;
            i = oi;
        }
    }
    if (lane == 0) {
        bv[sg] = v;
        bi[sg] = i;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    v = 0.0f;
    i = -1;
    for (uint s = 0; s < nsg; s++) {
        if (amx_better(bv[s], bi[s], v, i)) {
            v = bv[s];
            i = bi[s];
        }
    }
}

// argmax_partial: Groups (segments, m); segment length is
// ceil(n / segments) (args.argmax).
kernel void argmax_partial(device const float* x [[buffer(0)]],
                           constant Args& args [[buffer(8)]],
                           device uint* scratch [[buffer(10)]],
                           uint2 tg [[threadgroup_position_in_grid]],
                           uint2 ntgs [[threadgroups_per_grid]],
                           uint tid [[thread_position_in_threadgroup]],
                           uint ntg [[threads_per_threadgroup]],
                           uint lane [[thread_index_in_simdgroup]],
                           uint sg [[simdgroup_index_in_threadgroup]],
                           uint nsg [[simdgroups_per_threadgroup]]) {
    threadgroup float bv[32];
    threadgroup int bi[32];
    const uint n = args.argmax.n;
    const uint seg = (n + ntgs.x - 1) / ntgs.x;
    const uint lo = tg.x * seg;
    const uint hi = min(lo + seg, n);
    device const float* xr = x + (ulong)tg.y * args.argmax.ldx;
    float v = 0.0f;
    int i = -1;
    for (uint j = lo + tid; j < hi; j += ntg) {
        const float xv = xr[j];
        if (!amx_isnan(xv) && (i < 0 || xv > v)) { // j rises: ties keep the first
            v = xv;
            i = int(j);
        }
    }
    amx_tg_reduce(v, i, bv, bi, lane, sg, nsg);
    if (tid == 0) {
        device uint* o = scratch + 2 + 2 * ((ulong)tg.y * ntgs.x + tg.x);
        if (tg.x == 0 && tg.y == 0) {
            scratch[0] = ntgs.x;
        }
        o[0] = as_type<uint>(v);
        o[1] = as_type<uint>(i);
    }
}

// argmax_reduce: Groups m; writes out[row] (args.argmax).
kernel void argmax_reduce(device int* out [[buffer(1)]],
                          constant Args& args [[buffer(8)]],
                          device const uint* scratch [[buffer(10)]],
                          uint row [[threadgroup_position_in_grid]],
                          uint tid [[thread_position_in_threadgroup]],
                          uint ntg [[threads_per_threadgroup]],
                          uint lane [[thread_index_in_simdgroup]],
                          uint sg [[simdgroup_index_in_threadgroup]],
                          uint nsg [[simdgroups_per_threadgroup]]) {
    threadgroup float bv[32];
    threadgroup int bi[32];
    const uint nseg = scratch[0];
    device const uint* pr = scratch + 2 + 2 * (ulong)row * nseg;
    float v = 0.0f;
    int i = -1;
    for (uint s = tid; s < nseg; s += ntg) {
        const float sv = as_type<float>(pr[2 * s]);
        const int si = as_type<int>(pr[2 * s + 1]);
        if (amx_better(sv, si, v, i)) {
            v = sv;
            i = si;
        }
    }
    amx_tg_reduce(v, i, bv, bi, lane, sg, nsg);
    if (tid == 0) {
        out[row] = max(i, 0);
    }
}
