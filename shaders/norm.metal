// RMSNorm and LayerNorm (plan.RMSNorm, plan.LayerNorm): one threadgroup per
// row, the threads striding over the row, sums reduced per SIMD-group and
// then across SIMD-groups through threadgroup memory. Each thread writes
// only the elements it read itself, so out may alias x.

// norm_tg_sum returns the sum of v over the threadgroup to every thread.
// buf holds one float per SIMD-group; the second barrier lets the caller
// reduce again with the same buffer.
static inline float norm_tg_sum(float v, threadgroup float* buf, uint lane, uint sg, uint nsg) {
    v = simd_sum(v);
    if (lane == 0) {
        buf[sg] = v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float r = 0.0f;
    for (uint i = 0; i < nsg; i++) {
        r += buf[i];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return r;
}

// rms_norm (args.rms_norm; inner 0 means 1). Row r lives at (r/inner)*ld + (r%inner)*dim. Groups: rows.
kernel void rms_norm(device const float* x [[buffer(0)]],
                     device const float* w [[buffer(1)]],
                     device float* out [[buffer(2)]],
                     constant Args& args [[buffer(8)]],
                     uint row [[threadgroup_position_in_grid]],
                     uint tid [[thread_position_in_threadgroup]],
                     uint ntg [[threads_per_threadgroup]],
                     uint lane [[thread_index_in_simdgroup]],
                     uint sg [[simdgroup_index_in_threadgroup]],
                     uint nsg [[simdgroups_per_threadgroup]]) {
    threadgroup float buf[32];
    const uint dim = args.rms_norm.dim;
    const uint inner = args.rms_norm.inner == 0 ? 1u : args.rms_norm.inner;
    const uint g = row / inner;
    const uint s = (row % inner) * dim;
    device const float* xr = x + (ulong)g * args.rms_norm.ldx + s;
    device float* o = out + (ulong)g * args.rms_norm.ldo + s;
    float ss = 0.0f;
    for (uint i = tid; i < dim; i += ntg) {
        float v = xr[i];
        ss += v * v;
    }
    ss = norm_tg_sum(ss, buf, lane, sg, nsg);
    const float scale = rsqrt(ss / float(dim) + args.rms_norm.eps);
    const bool hasW = has_bind(args, RMS_NORM_W);
    for (uint i = tid; i < dim; i += ntg) {
        float v = xr[i] * scale;
        o[i] = hasW ? v * w[i] : v;
    }
}

// LN_REGS is the elements a thread of layer_norm holds in registers: rows
// of up to LN_REGS threads' worth are read once (all of a thread's loads
// issued before the first is used), not once per pass: on an H200 the
// decoder step's 384-float rows cost a LayerNorm launch ~0.5 µs per further
// element a thread walked, a dependent load in each of the three passes
// (issue #34: at 32 threads a row, 12 elements, the step took 0.39 ms, at
// 256 threads 0.32). The sums are the passes' own, in the same order (a
// row's tail adds zeros).
#define LN_REGS 4

// layer_norm (args.layer_norm): biased variance, taken
// around the mean in a second pass as the CPU does. Groups: rows.
kernel void layer_norm(device const float* x [[buffer(0)]],
                       device const float* w [[buffer(1)]],
                       device const float* b [[buffer(2)]],
                       device float* out [[buffer(3)]],
                       constant Args& args [[buffer(8)]],
                       uint row [[threadgroup_position_in_grid]],
                       uint tid [[thread_position_in_threadgroup]],
                       uint ntg [[threads_per_threadgroup]],
                       uint lane [[thread_index_in_simdgroup]],
                       uint sg [[simdgroup_index_in_threadgroup]],
                       uint nsg [[simdgroups_per_threadgroup]]) {
    threadgroup float buf[32];
    const uint dim = args.layer_norm.dim;
    device const float* xr = x + (ulong)row * args.layer_norm.ldx;
    device float* o = out + (ulong)row * args.layer_norm.ldo;
    const bool hasW = has_bind(args, LAYER_NORM_W);
    const bool hasB = has_bind(args, LAYER_NORM_B);
    if (dim <= LN_REGS * ntg) {
        float v[LN_REGS];
        #pragma unroll
        for (uint j = 0; j < LN_REGS; j++) { // clamped, not branched: every load goes out at once
            const uint i = tid + j * ntg;
            const float e = xr[min(i, dim - 1)];
            v[j] = i < dim ? e : 0.0f;
        }
        float s1 = 0.0f;
        #pragma unroll
        for (uint j = 0; j < LN_REGS; j++) {
            s1 += v[j];
        }
        const float m1 = norm_tg_sum(s1, buf, lane, sg, nsg) / float(dim);
        float s2 = 0.0f;
        #pragma unroll
        for (uint j = 0; j < LN_REGS; j++) {
            const float d = tid + j * ntg < dim ? v[j] - m1 : 0.0f;
            s2 += d * d;
        }
        s2 = norm_tg_sum(s2, buf, lane, sg, nsg);
        const float sc = rsqrt(s2 / float(dim) + args.layer_norm.eps);
        #pragma unroll
        for (uint j = 0; j < LN_REGS; j++) {
            const uint i = tid + j * ntg;
            if (i < dim) {
                float y = (v[j] - m1) * sc;
                if (hasW) {
                    y *= w[i];
                }
                if (hasB) {
                    y += b[i];
                }
                o[i] = y;
            }
        }
        return;
    }
    float sum = 0.0f;
    for (uint i = tid; i < dim; i += ntg) {
        sum += xr[i];
    }
    const float mean = norm_tg_sum(sum, buf, lane, sg, nsg) / float(dim);
    float ss = 0.0f;
    for (uint i = tid; i < dim; i += ntg) {
        float d = xr[i] - mean;
        ss += d * d;
    }
    ss = norm_tg_sum(ss, buf, lane, sg, nsg);
    const float scale = rsqrt(ss / float(dim) + args.layer_norm.eps);
    for (uint i = tid; i < dim; i += ntg) {
        float y = (xr[i] - mean) * scale;
        if (hasW) {
            y *= w[i];
        }
        if (hasB) {
            y += b[i];
        }
        o[i] = y;
    }
}
