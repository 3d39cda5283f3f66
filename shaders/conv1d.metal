// conv1d: out[to, co] = bias[co] + Σ_ci Σ_j W[co, ci, j]·x[to*stride+j-pad, ci],
// computed as the tiled product of the im2col view of x (never stored: mm_x
// gathers it while filling the activation tile) with W as cout rows of
// cin·kw elements (mm_core in common.metal). x is time-major [T][cin], or
// channel-major [cin][T] with flags bit0; out is time-major.
//
// Bindings: 0 W, 1 x, 2 bias, 3 out.
// P: 0 cin, 1 cout, 2 T, 3 kw, 4 stride, 5 pad, 6 flags, 7 ldx, 8 ldo.
// Grid (ceil(cout/MM_BN), ceil(tout/MM_BM)), MM_THREADS threads.
template <typename B>
kernel void conv1d_impl(
        device const uchar* W [[buffer(0)]],
        device const float* x [[buffer(1)]],
        device const float* bias [[buffer(2)]],
        device float* out [[buffer(3)]],
        constant Args& args [[buffer(8)]],
        uint3 tgpig [[threadgroup_position_in_grid]],
        uint tiitg [[thread_index_in_threadgroup]],
        uint sgitg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float sw[MM_BK * MM_BN];
    threadgroup float sx[MM_BM * MM_BK];

    mm_shape s;
    s.conv = 1;
    s.cin = int(args.conv1d.cin);
    s.n = int(args.conv1d.cout);
    s.T = int(args.conv1d.t);
    s.kw = int(args.conv1d.kw);
    s.stride = int(args.conv1d.stride);
    s.pad = int(args.conv1d.pad);
    s.chanmaj = int(args.conv1d.flags & KFLAG_CHANNEL_MAJOR);
    s.ldx = int(args.conv1d.ldx);
    s.k = s.cin * s.kw;
    s.m = (s.T + 2 * s.pad - s.kw) / s.stride + 1;
    const int ldo = int(args.conv1d.ldo);
    const int n0 = int(tgpig.x) * MM_BN, m0 = int(tgpig.y) * MM_BM;

    mm_core<B>(W, x, s, n0, m0, sw, sx, tiitg, sgitg);

    const bool hb = has_bind(args, CONV1D_BIAS);
    for (int idx = int(tiitg); idx < MM_BM * MM_BN; idx += MM_THREADS) {
        const int row = m0 + idx / MM_BN, col = n0 + idx % MM_BN;
        if (row >= s.m || col >= s.n) continue;
        float v = sw[idx];
        if (hb) v += bias[col];
        out[row * ldo + col] = v;
    }
}

typedef decltype(conv1d_impl<w_f32>) conv1d_t;

template [[host_name("conv1d_f32")]] kernel conv1d_t conv1d_impl<w_f32>;
template [[host_name("conv1d_f16")]] kernel conv1d_t conv1d_impl<w_f16>;
template [[host_name("conv1d_bf16")]] kernel conv1d_t conv1d_impl<w_bf16>;
template [[host_name("conv1d_q4_0")]] kernel conv1d_t conv1d_impl<block_q4_0>;
template [[host_name("conv1d_q4_1")]] kernel conv1d_t conv1d_impl<block_q4_1>;
template [[host_name("conv1d_q5_0")]] kernel conv1d_t conv1d_impl<block_q5_0>;
template [[host_name("conv1d_q5_1")]] kernel conv1d_t conv1d_impl<block_q5_1>;
template [[host_name("conv1d_q8_0")]] kernel conv1d_t conv1d_impl<block_q8_0>;
template [[host_name("conv1d_q2_k")]] kernel conv1d_t conv1d_impl<block_q2_k>;
template [[host_name("conv1d_q3_k")]] kernel conv1d_t conv1d_impl<block_q3_k>;
template [[host_name("conv1d_q4_k")]] kernel conv1d_t conv1d_impl<block_q4_k>;
template [[host_name("conv1d_q5_k")]] kernel conv1d_t conv1d_impl<block_q5_k>;
template [[host_name("conv1d_q6_k")]] kernel conv1d_t conv1d_impl<block_q6_k>;
template [[host_name("conv1d_iq4_nl")]] kernel conv1d_t conv1d_impl<block_iq4_nl>;
