// Element-wise kernels: add, scale, copy (f32 -> f32/f16/bf16), gelu,
// silu_mul, gelu_mul, and the row softmax. One thread per element for the
// element-wise ones: grid (ceil(n/threads), m), the row in y.
// Helpers here are prefixed ew_ because every .metal file shares one
// library namespace.

// K is the kernel's member of the Args union (kargs.h): every element-wise
// record starts with n, m.
#define EW_ROW_COL(K)                                \
    const uint n = args.K.n, m = args.K.m;           \
    const uint col = gid.x, row = gid.y;             \
    if (col >= n || row >= m) return;

// out = a + b; ldb == 0 broadcasts b's first row.
kernel void add(device const float* a [[buffer(0)]],
                device const float* b [[buffer(1)]],
                device float* out [[buffer(2)]],
                constant Args& args [[buffer(8)]],
                uint2 gid [[thread_position_in_grid]]) {
    EW_ROW_COL(add)
    const ulong lda = args.add.lda, ldb = args.add.ldb, ldo = args.add.ldo;
    out[row * ldo + col] = a[row * lda + col] + b[row * ldb + col];
}

kernel void scale(device const float* x [[buffer(0)]],
                  device float* out [[buffer(1)]],
                  constant Args& args [[buffer(8)]],
                  uint2 gid [[thread_position_in_grid]]) {
    EW_ROW_COL(scale)
    const ulong ldx = args.scale.ldx, ldo = args.scale.ldo;
    out[row * ldo + col] = x[row * ldx + col] * args.scale.scale;
}

kernel void copy_f32(device const float* src [[buffer(0)]],
                     device float* dst [[buffer(1)]],
                     constant Args& args [[buffer(8)]],
                     uint2 gid [[thread_position_in_grid]]) {
    EW_ROW_COL(copy)
    dst[(ulong)row * args.copy.ldd + col] = src[(ulong)row * args.copy.lds + col];
}

// f32 -> f16 rounds to nearest even (Metal's conversion), Inf/NaN kept.
kernel void copy_f16(device const float* src [[buffer(0)]],
                     device half* dst [[buffer(1)]],
                     constant Args& args [[buffer(8)]],
                     uint2 gid [[thread_position_in_grid]]) {
    EW_ROW_COL(copy)
    dst[(ulong)row * args.copy.ldd + col] = half(src[(ulong)row * args.copy.lds + col]);
}

// f32 -> bf16 rounds to nearest even; NaNs stay quiet NaNs.
kernel void copy_bf16(device const float* src [[buffer(0)]],
                      device ushort* dst [[buffer(1)]],
                      constant Args& args [[buffer(8)]],
                      uint2 gid [[thread_position_in_grid]]) {
    EW_ROW_COL(copy)
    uint b = as_type<uint>(src[(ulong)row * args.copy.lds + col]);
    ushort h;
    if ((b & 0x7fffffffu) > 0x7f800000u) {
        h = ushort(b >> 16) | ushort(64);
    } else {
        h = ushort((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
    }
    dst[(ulong)row * args.copy.ldd + col] = h;
}

kernel void gelu(device const float* x [[buffer(0)]],
                 device float* out [[buffer(1)]],
                 constant Args& args [[buffer(8)]],
                 uint2 gid [[thread_position_in_grid]]) {
    EW_ROW_COL(gelu)
    float v = x[(ulong)row * args.gelu.ldx + col];
    out[(ulong)row * args.gelu.ldo + col] = args.gelu.mode == KACT_GELU_ERF ? gelu_erf(v) : gelu_tanh(v);
}

kernel void gelu_mul(device const float* gate [[buffer(0)]],
                     device const float* up [[buffer(1)]],
                     device float* out [[buffer(2)]],
                     constant Args& args [[buffer(8)]],
                     uint2 gid [[thread_position_in_grid]]) {
    EW_ROW_COL(gelu_mul)
    float g = gate[(ulong)row * args.gelu_mul.ldg + col];
    out[(ulong)row * args.gelu_mul.ldo + col] = gelu_tanh(g) * up[(ulong)row * args.gelu_mul.ldu + col];
}

kernel void silu_mul(device const float* gate [[buffer(0)]],
                     device const float* up [[buffer(1)]],
                     device float* out [[buffer(2)]],
                     constant Args& args [[buffer(8)]],
                     uint2 gid [[thread_position_in_grid]]) {
    EW_ROW_COL(silu_mul)
    float g = gate[(ulong)row * args.silu_mul.ldg + col];
    out[(ulong)row * args.silu_mul.ldo + col] = g / (1.0f + exp(-g)) * up[(ulong)row * args.silu_mul.ldu + col];
}

// Row softmax of scale·x, one threadgroup per row (out may alias x: each
// thread reads and writes only its own columns).
kernel void softmax(device const float* x [[buffer(0)]],
                    device float* out [[buffer(1)]],
                    constant Args& args [[buffer(8)]],
                    uint row [[threadgroup_position_in_grid]],
                    uint tid [[thread_index_in_threadgroup]],
                    uint ntg [[threads_per_threadgroup]],
                    uint sg [[simdgroup_index_in_threadgroup]],
                    uint lane [[thread_index_in_simdgroup]],
                    uint nsg [[simdgroups_per_threadgroup]]) {
    threadgroup float part[32];
    const uint n = args.softmax.n;
    const float s = args.softmax.scale;
    device const float* xr = x + (ulong)row * args.softmax.ldx;
    device float* o = out + (ulong)row * args.softmax.ldo;
    float mx = -INFINITY;
    for (uint i = tid; i < n; i += ntg) mx = max(mx, xr[i] * s);
    mx = ew_reduce(mx, 0, part, sg, lane, nsg);
    float sum = 0.0f;
    for (uint i = tid; i < n; i += ntg) {
        float e = exp(xr[i] * s - mx);
        o[i] = e;
        sum += e;
    }
    sum = ew_reduce(sum, 1, part, sg, lane, nsg);
    const float inv = 1.0f / sum;
    for (uint i = tid; i < n; i += ntg) o[i] *= inv;
}
