// RoPE (plan.Rope) and RoPE fused with the KV-cache write (plan.RopeKV).
// One threadgroup per (row, head); each thread rotates pairs i, i+ntg, ...
// and, for the K heads of RopeKV, stores the values it computed into the
// cache itself, so no barrier is needed anywhere.

// rope_angle_cs returns (cos, sin) of pos·freq. The CPU takes the angle in
// float64 because pos·freq loses digits in float32 at long contexts; here
// the product is kept as an unevaluated sum hi+lo (exact, through fma) and
// reduced modulo 2π with a two-part 2π before the float sin/cos. FAST
// (RopeAttention's decode prologue) takes the GPU's approximations of the
// reduced angle (on CUDA sin.approx/cos.approx, ~2^-21 absolute, where
// precise:: is ~100 double-precision instructions in every SIMD-group of
// the launch); the executor keeps the precise functions.
template <bool FAST = false>
static inline float2 rope_angle_cs(uint pos, float freq) {
    const float p = float(pos);
    const float hi = p * freq;
    const float lo = fma(p, freq, -hi);
    const float twoPiHi = 6.28318548202514648f;   // float(2π)
    const float twoPiLo = -1.74845553e-7f;        // 2π − twoPiHi
    const float k = rint(hi * 0.159154943091895336f);
    float r = fma(-k, twoPiHi, hi);
    r = fma(-k, twoPiLo, r);
    r += lo;
    if (FAST) {
        return float2(fast::cos(r), fast::sin(r));
    }
    return float2(precise::cos(r), precise::sin(r));
}

// rope_head rotates the first ropeDim dims of one head in place
// (pairs (2i, 2i+1), or (i, i+half) for NeoX), optionally also storing the
// rotated pair into a cache row (kc, at element dst).
template <typename C>
static inline void rope_head(device float* v, uint half_, bool neox, uint pos, device const float* freqs,
                             float ms, device C* kc, bool store, uint tid, uint ntg) {
    for (uint i = tid; i < half_; i += ntg) {
        const float2 cs = rope_angle_cs(pos, freqs[i]) * ms;
        const uint ia = neox ? i : 2 * i;
        const uint ib = neox ? i + half_ : 2 * i + 1;
        const float a = v[ia];
        const float b = v[ib];
        const float ra = a * cs.x - b * cs.y;
        const float rb = a * cs.y + b * cs.x;
        v[ia] = ra;
        v[ib] = rb;
        if (store) {
            kc[ia] = C(ra);
            kc[ib] = C(rb);
        }
    }
}

// rope (args.rope). Groups: (m, nHead).
kernel void rope(device float* x [[buffer(0)]],
                 device const float* freqs [[buffer(1)]],
                 constant Args& args [[buffer(8)]],
                 uint2 tg [[threadgroup_position_in_grid]],
                 uint tid [[thread_position_in_threadgroup]],
                 uint ntg [[threads_per_threadgroup]]) {
    const uint hd = args.rope.head_dim;
    const uint t = tg.x;
    const uint h = tg.y;
    const uint ropeDim = args.rope.rope_dim == 0 ? hd : args.rope.rope_dim;
    const uint pos = (args.rope.flags & KFLAG_PER_SEQ_ROWS) != 0 ? args.rope.pos0 : args.rope.pos0 + t;
    float ms = args.rope.m_scale;
    if (ms == 0.0f) {
        ms = 1.0f;
    }
    if (!has_bind(args, ROPE_FREQS)) {
        return; // no frequencies: no rotation (as the CPU)
    }
    device float* v = x + (ulong)t * args.rope.ldx + h * hd;
    rope_head<float>(v, ropeDim / 2, args.rope.mode == KROPE_NEOX, pos, freqs, ms, (device float*)v, false, tid, ntg);
}

// rope_kv (args.rope_kv). Groups: (m, nHead+nKV). Group head hh < nHead rotates Q head hh; the
// others rotate K head hh−nHead and store it and the V head into the caches.
template <typename C>
static inline void rope_kv_impl(device float* qkv, device const float* freqs, device C* kc, device C* vc,
                                constant Args& args, uint2 tg, uint tid, uint ntg) {
    const uint hd = args.rope_kv.head_dim;
    const uint nHead = args.rope_kv.n_head;
    const uint nKV = args.rope_kv.nkv;
    const uint t = tg.x;
    const uint hh = tg.y;
    const uint ropeDim = args.rope_kv.rope_dim == 0 ? hd : args.rope_kv.rope_dim;
    const bool perSeq = (args.rope_kv.flags & KFLAG_PER_SEQ_ROWS) != 0;
    const uint pos = perSeq ? args.rope_kv.pos0 : args.rope_kv.pos0 + t;
    const uint seq = perSeq ? t : 0u;
    float ms = args.rope_kv.m_scale;
    if (ms == 0.0f) {
        ms = 1.0f;
    }
    device float* row = qkv + (ulong)t * args.rope_kv.ldqkv;
    device float* v = row + hh * hd;
    const bool rot = has_bind(args, ROPE_KV_FREQS);
    const bool isK = hh >= nHead;
    const ulong dst = (ulong)seq * args.rope_kv.seq_stride + (ulong)(hh - nHead) * args.rope_kv.head_stride + (ulong)pos * args.rope_kv.pos_stride;
    device C* kd = kc + (isK ? dst : 0);
    if (rot) {
        rope_head<C>(v, ropeDim / 2, args.rope_kv.mode == KROPE_NEOX, pos, freqs, ms, kd, isK, tid, ntg);
    }
    if (!isK) {
        return;
    }
    // dims the rotation did not store: past ropeDim, or all without freqs
    for (uint i = (rot ? ropeDim : 0) + tid; i < hd; i += ntg) {
        kd[i] = C(v[i]);
    }
    device const float* vv = row + (nHead + nKV + (hh - nHead)) * hd;
    device C* vdst = vc + dst;
    for (uint i = tid; i < hd; i += ntg) {
        vdst[i] = C(vv[i]);
    }
}

template <typename C>
kernel void rope_kv(device float* qkv [[buffer(0)]],
                    device const float* freqs [[buffer(1)]],
                    device C* kc [[buffer(2)]],
                    device C* vc [[buffer(3)]],
                    constant Args& args [[buffer(8)]],
                    uint2 tg [[threadgroup_position_in_grid]],
                    uint tid [[thread_position_in_threadgroup]],
                    uint ntg [[threads_per_threadgroup]]) {
    rope_kv_impl<C>(qkv, freqs, kc, vc, args, tg, tid, ntg);
}

typedef decltype(rope_kv<float>) rope_kv_f32_t;
typedef decltype(rope_kv<half>) rope_kv_f16_t;
template [[host_name("rope_kv_f32")]] kernel rope_kv_f32_t rope_kv<float>;
template [[host_name("rope_kv_f16")]] kernel rope_kv_f16_t rope_kv<half>;
