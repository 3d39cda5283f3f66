// attention_mma16_{f32,f16}, attention_mma16_hd128_{f32,f16} (issue #35):
// attention_mma with the blocking of the CUDA tensor-core flash attention
// (cuda/native/attention_mma.cu, attention_mma_tc_* and
// attention_mma_tc_hd128_*), their MSL twins, so the executor checks what
// the GPU runs: each SIMD-group owns 16 query rows (the native warp's
// m16, two 8-row blocks here), a threadgroup of two of them 32
// consecutive rows of one head (grid (1, nHead, ceil(m/32)), 64 threads);
// keys go in 32-key tiles from the first tile any row of the threadgroup
// sees, K and V staged in threadgroup memory and shared by both
// SIMD-groups (one after the other in one tile buffer: both f32 tiles of
// 128-dim heads and the scores are more than Metal's 32 KB, where the
// native kernel has 48); per tile S = Q·Kᵀ (16 × 32), the online softmax of each row
// (the max updated and the accumulator rescaled once a tile, a tile that
// shows a row nothing leaves it alone), then O = diag(corr)·O + P·V. Head
// sizes: multiples of 8 up to HD (64, or 128 for the hd128 instances).
// Where the native kernel splits Q, P and f32 K/V into f16 hi + lo parts
// (products to ~2^-21), these products are float's; rows are
// independent, so only the summation order inside a tile differs.
// attention_mma (8 rows a SIMD-group, 16 a threadgroup) stays Metal's.
//
// Dynamic threadgroup memory (attnMMA16Smem in launch_attention.go):
// floats, the tile (32 keys × hd of K, then of V; Q is staged through it
// before the first tile, O after the last), then per SIMD-group 16 × 32
// scores, two 8×8 diagonal blocks and its rows' 1/sum. No probs
// (the launch rule keeps attention_mma when they are bound).
// Bindings: 0 q, 1 K, 2 V, 3 out.
enum : uint {
    ATTN_MMA16_SG = 2,    // SIMD-groups (16 rows each) per threadgroup
    ATTN_MMA16_KT = 32,   // keys a tile
    ATTN_MMA16_SS = 512,  // a SIMD-group's scores (16 rows × 32 keys)
    ATTN_MMA16_DS = 128,  // its two diagonal blocks
    ATTN_MMA16_RS = 16,   // its rows' 1/sum
};

// attn_mma16_tile stages the keys jb..jb+nk of one cache (K or V) as
// floats, zero past nk (products must not meet garbage), for every
// SIMD-group after the barrier it ends with.
template <typename T>
static inline void attn_mma16_tile(device const T* C, threadgroup float* KV, ulong base, ulong ps, uint jb, uint nk,
                                   uint hd, uint tid) {
    for (uint e = tid; e < ATTN_MMA16_KT * hd; e += 32 * ATTN_MMA16_SG) {
        const uint k = e / hd;
        const uint d = e - k * hd;
        KV[e] = k < nk ? float(C[base + (ulong)(jb + k) * ps + d]) : 0.0f;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
}

template <typename T, uint HD>
kernel void attention_mma16(device const float* q [[buffer(0)]],
                            device const T* K [[buffer(1)]],
                            device const T* V [[buffer(2)]],
                            device float* out [[buffer(3)]],
                            constant Args& args [[buffer(8)]],
                            threadgroup float* tgm [[threadgroup(0)]],
                            uint3 tg [[threadgroup_position_in_grid]],
                            uint sg [[simdgroup_index_in_threadgroup]],
                            uint lane [[thread_index_in_simdgroup]],
                            uint tid [[thread_index_in_threadgroup]]) {
    const uint hd = args.attention.head_dim;
    const uint nHead = args.attention.n_head;
    const uint nKV = args.attention.nkv;
    const uint m = args.attention.m;
    const float scale = args.attention.scale;
    const uint h = tg.y;
    const uint t0 = tg.z * 16 * ATTN_MMA16_SG;
    const uint tr0 = t0 + 16 * sg; // this SIMD-group's first row
    const uint jEnd = attn_visible(args, min(t0 + 16 * ATTN_MMA16_SG, m) - 1);
    const bool anyRow = tr0 < m;
    const uint jRows = anyRow ? attn_visible(args, min(tr0 + 16, m) - 1) : 0u; // keys its rows see
    const ulong ps = args.attention.pos_stride;
    const ulong base = (ulong)(h / (nHead / nKV)) * args.attention.head_stride;
    const uint nb = hd / 8;
    threadgroup float* KV = tgm; // K's tile, then V's
    threadgroup float* Ss = KV + ATTN_MMA16_KT * HD + sg * ATTN_MMA16_SS;
    threadgroup float* Ds = KV + ATTN_MMA16_KT * HD + ATTN_MMA16_SG * ATTN_MMA16_SS + sg * ATTN_MMA16_DS;
    threadgroup float* Rs = KV + ATTN_MMA16_KT * HD + ATTN_MMA16_SG * (ATTN_MMA16_SS + ATTN_MMA16_DS) + sg * ATTN_MMA16_RS;
    threadgroup float* Qs = KV + sg * 16 * hd; // this SIMD-group's 16 rows, before and after the tiles

    // Q rows (zero past m), row-major 16 × hd, into registers
    for (uint e = lane; e < 16 * hd; e += 32) {
        const uint r = e / hd;
        const uint t = tr0 + r;
        Qs[e] = t < m ? q[(ulong)t * args.attention.ldq + h * hd + (e - r * hd)] : 0.0f;
    }
    simdgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_float8x8 O[2][HD / 8];
    simdgroup_float8x8 Qm[2][HD / 8];
    for (uint i = 0; i < 2; i++)
        for (uint b = 0; b < HD / 8; b++) {
            O[i][b] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
            if (b < nb) {
                simdgroup_load(Qm[i][b], Qs + i * 8 * hd + b * 8, hd);
            }
        }
    // lane r < 16 keeps row r's softmax state
    const uint myT = tr0 + lane;
    const bool myRow = lane < 16 && myT < m;
    const uint nvis = myRow ? attn_visible(args, myT) : 0u;
    const uint jf = myRow ? attn_first(args, myT) : 0u; // window start of row `lane`
    float M = -INFINITY;
    float S = 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup); // every Q is in registers before K's tile lands

    // from the first tile any row of the threadgroup sees (its first row's window)
    for (uint jb = attn_first(args, t0) & ~(ATTN_MMA16_KT - 1); jb < jEnd; jb += ATTN_MMA16_KT) {
        const uint nk = min(uint(ATTN_MMA16_KT), jEnd - jb);
        const bool live = anyRow && jb < jRows;
        attn_mma16_tile(K, KV, base, ps, jb, nk, hd, tid);
        if (live) {
            // S = Q·Kᵀ, 16 rows × 32 keys
            for (uint kb = 0; kb < 4; kb++) {
                simdgroup_float8x8 acc[2];
                for (uint i = 0; i < 2; i++) acc[i] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
                for (uint db = 0; db < HD / 8; db++) {
                    if (db < nb) {
                        simdgroup_float8x8 bt;
                        simdgroup_load(bt, KV + kb * 8 * hd + db * 8, hd, ulong2(0, 0), true);
                        for (uint i = 0; i < 2; i++) simdgroup_multiply_accumulate(acc[i], Qm[i][db], bt, acc[i]);
                    }
                }
                for (uint i = 0; i < 2; i++) simdgroup_store(acc[i], Ss + i * 8 * 32 + kb * 8, 32);
            }
            simdgroup_barrier(mem_flags::mem_threadgroup);
            bool rescale = false;
            if (lane < 16) {
                // online softmax of row `lane`; P replaces S, corr goes on
                // the diagonal of its block of D
                threadgroup float* srow = Ss + lane * 32;
                const uint jv = myRow ? min(nvis, jb + nk) : jb; // visible keys end
                float mb = -INFINITY;
                for (uint k = 0; jb + k < jv; k++) {
                    if (jb + k < jf) {
                        continue; // before the row's window
                    }
                    const float sv = srow[k] * scale;
                    srow[k] = sv;
                    mb = max(mb, sv);
                }
                const float nm = max(M, mb);
                const bool none = max(jb, jf) >= jv; // nothing visible in this tile
                const float corr = none ? 1.0f : exp(M - nm);
                float sum = 0.0f;
                for (uint k = 0; k < 32; k++) {
                    const float pv = jb + k >= jf && jb + k < jv ? exp(srow[k] - nm) : 0.0f;
                    srow[k] = pv;
                    sum += pv;
                }
                if (!none) {
                    S = S * corr + sum;
                    M = nm;
                }
                rescale = corr != 1.0f;
                for (uint c = 0; c < 8; c++) {
                    Ds[(lane / 8) * 64 + (lane % 8) * 8 + c] = c == lane % 8 ? corr : 0.0f;
                }
            }
            simdgroup_barrier(mem_flags::mem_threadgroup);
            // O = diag(corr)·O only when some row's max moved; constant
            // trip counts (b < nb inside) keep O in registers
            const bool anyRescale = simd_any(rescale);
            for (uint i = 0; i < 2; i++) {
                simdgroup_float8x8 dm;
                simdgroup_load(dm, Ds + i * 64, 8);
                for (uint b = 0; b < HD / 8; b++) {
                    if (anyRescale && b < nb) {
                        simdgroup_float8x8 scaled;
                        simdgroup_multiply(scaled, dm, O[i][b]);
                        O[i][b] = scaled;
                    }
                }
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup); // K's tile is read
        attn_mma16_tile(V, KV, base, ps, jb, nk, hd, tid);
        if (live) {
            for (uint kb = 0; kb < 4; kb++) {
                simdgroup_float8x8 pm[2];
                for (uint i = 0; i < 2; i++) simdgroup_load(pm[i], Ss + i * 8 * 32 + kb * 8, 32);
                for (uint b = 0; b < HD / 8; b++) {
                    if (b < nb) {
                        simdgroup_float8x8 vb;
                        simdgroup_load(vb, KV + kb * 8 * hd + b * 8, hd);
                        for (uint i = 0; i < 2; i++) simdgroup_multiply_accumulate(O[i][b], pm[i], vb, O[i][b]);
                    }
                }
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup); // the tile, S and D are rewritten next
    }
    if (!anyRow) {
        return;
    }
    // O to threadgroup memory (over this SIMD-group's Q rows: every tile
    // read is behind the loop's last barrier), then rows scaled by 1/S
    for (uint i = 0; i < 2; i++)
        for (uint b = 0; b < HD / 8; b++) {
            if (b < nb) {
                simdgroup_store(O[i][b], Qs + i * 8 * hd + b * 8, hd);
            }
        }
    if (lane < 16) {
        Rs[lane] = S > 0.0f ? 1.0f / S : 0.0f; // no visible key: zero output
    }
    simdgroup_barrier(mem_flags::mem_threadgroup);
    for (uint e = lane; e < 16 * hd; e += 32) {
        const uint r = e / hd;
        const uint t = tr0 + r;
        if (t < m) {
            out[(ulong)t * args.attention.ldo + h * hd + (e - r * hd)] = Qs[e] * Rs[r];
        }
    }
}

typedef decltype(attention_mma16<float, 64>) attention_mma16_f32_t;
typedef decltype(attention_mma16<half, 64>) attention_mma16_f16_t;
template [[host_name("attention_mma16_f32")]] kernel attention_mma16_f32_t attention_mma16<float, 64>;
template [[host_name("attention_mma16_f16")]] kernel attention_mma16_f16_t attention_mma16<half, 64>;
template [[host_name("attention_mma16_hd128_f32")]] kernel attention_mma16_f32_t attention_mma16<float, 128>;
template [[host_name("attention_mma16_hd128_f16")]] kernel attention_mma16_f16_t attention_mma16<half, 128>;
