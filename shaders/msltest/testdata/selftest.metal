// Executor self-tests: each kernel exercises one feature of the runtime
// (barriers, SIMD-group functions with returned lanes, simdgroup matrices,
// atomics, threadgroup memory, function constants, templates).
#include <metal_stdlib>
using namespace metal;

constant uint fc_mul [[function_constant(3)]];

// Reverses each threadgroup's slice through static threadgroup memory.
kernel void tg_reverse(device const float* in [[buffer(0)]],
                       device float* out [[buffer(1)]],
                       uint tid [[thread_position_in_threadgroup]],
                       uint ntg [[threads_per_threadgroup]],
                       uint gid [[thread_position_in_grid]]) {
    threadgroup float tile[1024];
    tile[tid] = in[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = tile[ntg - 1 - tid];
}

// Same through dynamic threadgroup memory and a threadgroup scalar.
kernel void tg_dynamic(device const float* in [[buffer(0)]],
                       device float* out [[buffer(1)]],
                       threadgroup float* tile [[threadgroup(0)]],
                       uint3 tid3 [[thread_position_in_threadgroup]],
                       uint3 ntg3 [[threads_per_threadgroup]],
                       uint3 group [[threadgroup_position_in_grid]]) {
    threadgroup float total;
    uint tid = tid3.x, ntg = ntg3.x;
    uint gid = group.x * ntg + tid;
    tile[tid] = in[gid];
    if (tid == 0) total = 0;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tid == 0) {
        float s = 0;
        for (uint i = 0; i < ntg; i++) s += tile[i];
        total = s;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = tile[ntg - 1 - tid] + total * float(fc_mul);
}

// Every SIMD-group function; lanes >= active (P0) return first.
// out row per thread: 16 results.
kernel void simd_all_ops(device const float* in [[buffer(0)]],
                         device float* out [[buffer(1)]],
                         constant uint& active [[buffer(2)]],
                         uint gid [[thread_position_in_grid]],
                         ushort lane [[thread_index_in_simdgroup]],
                         ushort sg [[simdgroup_index_in_threadgroup]]) {
    if (lane >= active) return;
    float v = in[gid];
    device float* o = out + gid * 16;
    o[0] = simd_sum(v);
    o[1] = simd_max(v);
    o[2] = simd_min(v);
    o[3] = simd_prefix_exclusive_sum(v);
    o[4] = simd_prefix_inclusive_sum(v);
    o[5] = simd_shuffle(v, (ushort)((lane * 7) % active));
    o[6] = simd_shuffle_down(v, 3);
    o[7] = simd_shuffle_up(v, 2);
    o[8] = simd_shuffle_xor(v, 1);
    o[9] = simd_broadcast(v, 1);
    o[10] = simd_broadcast_first(v);
    o[11] = simd_any(v > 0.9f) ? 1 : 0;
    o[12] = simd_all(v > -2.0f) ? 1 : 0;
    o[13] = float((ulong)simd_ballot(v > 0.0f) & 0xffffu);
    o[14] = float(simd_sum((int)lane));
    float4 q = float4(v, 1, 2, 3);
    o[15] = simd_sum(q).y + float(sg) * 1000;
}

// C[8x8 tiles] = A·B with simdgroup matrices: one SIMD-group per 8x8 output
// tile, A is M x K, B is K x N (row-major), K a multiple of 8.
template <typename T>
kernel void sg_matmul(device const T* a [[buffer(0)]],
                      device const T* b [[buffer(1)]],
                      device float* c [[buffer(2)]],
                      constant uint4& dims [[buffer(3)]],
                      uint2 tg [[threadgroup_position_in_grid]],
                      uint sg [[simdgroup_index_in_threadgroup]]) {
    uint N = dims.y, K = dims.z;
    uint row = tg.y * 8, col = (tg.x * 2 + sg) * 8;
    simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    for (uint k = 0; k < K; k += 8) {
        simdgroup_matrix<T, 8, 8> ma, mb;
        simdgroup_load(ma, a + row * K + k, K);
        simdgroup_load(mb, b + k * N + col, N);
        simdgroup_multiply_accumulate(acc, ma, mb, acc);
    }
    simdgroup_store(acc, c + row * N + col, N);
}
typedef decltype(sg_matmul<float>) sg_matmul_t;
template [[host_name("sg_matmul_f32")]] kernel sg_matmul_t sg_matmul<float>;
template [[host_name("sg_matmul_f16")]] kernel sg_matmul_t sg_matmul<half>;

// D = (A·B)·B for one 8x8 A and B: the second product reads a product
// (only each lane's own elements), which goes through a collective.
kernel void sg_chain(device const float* a [[buffer(0)]],
                     device const float* b [[buffer(1)]],
                     device float* d [[buffer(2)]]) {
    simdgroup_float8x8 ma, mb, t, r;
    simdgroup_load(ma, a);
    simdgroup_load(mb, b);
    simdgroup_multiply(t, ma, mb);
    simdgroup_multiply_accumulate(r, t, mb, ma);
    simdgroup_store(r, d);
}

// C = Aᵀ through a transposed load from threadgroup memory.
kernel void sg_transpose(device const float* a [[buffer(0)]],
                         device float* c [[buffer(1)]],
                         uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float t[64];
    t[lane] = a[lane];
    t[lane + 32] = a[lane + 32];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_float8x8 m;
    simdgroup_load(m, t, 8, ulong2(0, 0), true);
    simdgroup_store(m, c, 8);
}

// Histogram with device and threadgroup atomics.
kernel void atomics(device const uint* in [[buffer(0)]],
                    device atomic_uint* hist [[buffer(1)]],
                    device atomic_float* fsum [[buffer(2)]],
                    device atomic_int* imax [[buffer(3)]],
                    uint gid [[thread_position_in_grid]],
                    uint tid [[thread_index_in_threadgroup]]) {
    threadgroup atomic_uint local;
    if (tid == 0) atomic_store_explicit(&local, 0, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    uint v = in[gid];
    atomic_fetch_add_explicit(&hist[v % 8], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(fsum, float(v), memory_order_relaxed);
    atomic_fetch_max_explicit(imax, int(v), memory_order_relaxed);
    atomic_fetch_add_explicit(&local, 1, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tid == 0) atomic_fetch_add_explicit(&hist[8], atomic_load_explicit(&local, memory_order_relaxed), memory_order_relaxed);
}

// Vector types, swizzles, half conversions and as_type.
kernel void vectors(device const half4* in [[buffer(0)]],
                    device float4* out [[buffer(1)]],
                    uint gid [[thread_position_in_grid]]) {
    float4 v = float4(in[gid]);
    float2 lo = v.xy, hi = v.zw;
    float4 w = float4(hi, lo);
    w.xy += 1.0f;
    uint bits = as_type<uint>(w.x);
    out[gid] = float4(w.x, w.y, as_type<float>(bits) + dot(lo, hi), max(abs(w.w), 0.5f));
}

// Cost of collectives and barriers (BenchmarkCollectives): P0 rounds of
// simd_shuffle and, every 8th round, a barrier.
kernel void collective_loop(device float* out [[buffer(0)]],
                            constant uint& rounds [[buffer(1)]],
                            uint gid [[thread_position_in_grid]],
                            ushort lane [[thread_index_in_simdgroup]]) {
    float v = float(gid);
    for (uint r = 0; r < rounds; r++) {
        v += simd_shuffle(v, (ushort)((lane + r) & 31)) * 0.5f;
        if ((r & 7) == 7) threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    out[gid] = v;
}

// Divergent collectives: the two halves of a SIMD-group reduce separately
// (each its own collective), and threads past n return before a barrier.
kernel void divergent(device const float* in [[buffer(0)]],
                      device float* out [[buffer(1)]],
                      constant uint& n [[buffer(2)]],
                      uint gid [[thread_position_in_grid]],
                      uint tid [[thread_index_in_threadgroup]],
                      ushort lane [[thread_index_in_simdgroup]]) {
    threadgroup float first;
    if (gid >= n) return;
    float v = in[gid];
    float r;
    if (lane < 16) {
        r = simd_sum(v);
    } else {
        r = simd_max(v) + 1000.0f;
    }
    if (tid == 0) first = v;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = r + first * 0.0f + simd_product(1.0f) - 1.0f + float(simd_or(uint(lane == 3)) != 0u) * 0.5f;
}

// The remaining SIMD-group functions, lanes >= active returned (8 results
// per thread).
kernel void simd_more_ops(device const uint* in [[buffer(0)]],
                          device uint* out [[buffer(1)]],
                          constant uint& active [[buffer(2)]],
                          uint gid [[thread_position_in_grid]],
                          ushort lane [[thread_index_in_simdgroup]]) {
    if (lane >= active) return;
    uint v = in[gid];
    device uint* o = out + gid * 8;
    o[0] = simd_and(v);
    o[1] = simd_xor(v);
    o[2] = simd_prefix_exclusive_product(v % 3 + 1);
    o[3] = simd_prefix_inclusive_product(v % 3 + 1);
    o[4] = simd_shuffle_rotate_down(v, 5);
    o[5] = simd_shuffle_rotate_up(v, 3);
    o[6] = simd_is_first() ? 1u : 0u;
    o[7] = uint((ulong)simd_active_threads_mask());
}
