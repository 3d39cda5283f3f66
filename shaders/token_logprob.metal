// A row's log-probability of a given token (plan.TokenLogprob): one
// threadgroup a row, the log-sum-exp by threadgroup reductions in float32
// with −Inf skipped on the bits (as whisper_track).

static inline bool tl_ninf(float v) { return as_type<uint>(v) == 0xff800000u; }

kernel void token_logprob(device const float* x [[buffer(0)]],
                          device const int* ids [[buffer(1)]],
                          device float* out [[buffer(2)]],
                          constant Args& args [[buffer(8)]],
                          uint row [[threadgroup_position_in_grid]],
                          uint tid [[thread_index_in_threadgroup]],
                          uint ntg [[threads_per_threadgroup]],
                          uint sg [[simdgroup_index_in_threadgroup]],
                          uint lane [[thread_index_in_simdgroup]],
                          uint nsg [[simdgroups_per_threadgroup]]) {
    threadgroup float part[32];
    const uint n = args.token_logprob.n;
    const float ninf = as_type<float>(0xff800000u);
    device const float* xr = x + (ulong)row * args.token_logprob.ldx;
    float m = ninf;
    for (uint j = tid; j < n; j += ntg) {
        const float v = xr[j];
        if (!tl_ninf(v)) m = max(m, v);
    }
    m = ew_reduce(m, 0, part, sg, lane, nsg);
    float s = 0.0f;
    if (!tl_ninf(m)) {
        for (uint j = tid; j < n; j += ntg) {
            const float v = xr[j];
            if (!tl_ninf(v)) s += exp(v - m);
        }
    }
    s = ew_reduce(s, 1, part, sg, lane, nsg);
    if (tid != 0) return;
    const int id = ids[row];
    out[row] = id < 0 || (uint)id >= n ? ninf : xr[id] - (tl_ninf(m) ? ninf : m + log(s));
}
