// Word timing's alignment (plan.WhisperAlign), in three launches over the
// dispatch's scratch (launch_whisper_align.go's alignScratch): each head's
// row sums and frame statistics, the median-filtered, head-averaged cost,
// and the time warping: one threadgroup sweeps the anti-diagonals (a
// thread a row, three diagonals of cost in threadgroup memory, the trace
// in scratch), then thread 0 traces the path back. The matrix is float32
// (as the reference's); the warping's running costs are float-float pairs
// (a float32 sum and its rounding error, about 48 bits): the costs of
// rival paths on a flat matrix differ by 1e-7 of their size or less, which
// float32 sums cannot tell apart and the reference's float64 can (the CPU
// warps in float64). The pairs need IEEE float32 adds, unreassociated.

// wa_less orders float-float costs.
static inline bool wa_less(float ah, float al, float bh, float bl) { return ah < bh || (ah == bh && al < bl); }

// wa_frame is frame j of a row of cols frames, reflected at both ends.
static inline uint wa_frame(int j, int cols) {
    if (j < 0) j = -j;
    if (j >= cols) j = 2 * (cols - 1) - j;
    return (uint)j;
}

// wa_head is where head h's weights start.
static inline device const float* wa_head(device const float* w, constant Args& args, uint h) {
    const uint g = args.whisper_align.group;
    return w + (ulong)(h / g) * args.whisper_align.group_stride + (ulong)(h % g) * args.whisper_align.head_stride;
}

kernel void whisper_align_stats(device const float* w [[buffer(0)]],
                                constant Args& args [[buffer(8)]],
                                device float* scratch [[buffer(10)]],
                                uint h [[threadgroup_position_in_grid]],
                                uint tid [[thread_index_in_threadgroup]],
                                uint ntg [[threads_per_threadgroup]]) {
    const uint heads = args.whisper_align.heads, rows = args.whisper_align.rows;
    const uint cols = args.whisper_align.cols, ldw = args.whisper_align.ldw;
    device const float* wh = wa_head(w, args, h);
    device float* rs = scratch + (ulong)h * rows;
    for (uint t = tid; t < rows; t += ntg) {
        float s = 0.0f;
        for (uint j = 0; j < cols; j++) s += wh[(ulong)t * ldw + j];
        rs[t] = s;
    }
    threadgroup_barrier(mem_flags::mem_device);
    device float* mean = scratch + (ulong)heads * rows + (ulong)h * cols;
    device float* sd = mean + (ulong)heads * cols;
    for (uint j = tid; j < cols; j += ntg) {
        float m = 0.0f;
        for (uint t = 0; t < rows; t++) m += wh[(ulong)t * ldw + j] / rs[t];
        m /= (float)rows;
        float sq = 0.0f;
        for (uint t = 0; t < rows; t++) {
            const float d = wh[(ulong)t * ldw + j] / rs[t] - m;
            sq += d * d;
        }
        mean[j] = m;
        sd[j] = sqrt(sq / (float)rows);
    }
}

kernel void whisper_align_matrix(device const float* w [[buffer(0)]],
                                 constant Args& args [[buffer(8)]],
                                 device float* scratch [[buffer(10)]],
                                 uint2 tg [[threadgroup_position_in_grid]],
                                 uint tid [[thread_index_in_threadgroup]],
                                 uint ntg [[threads_per_threadgroup]]) {
    const uint heads = args.whisper_align.heads, rows = args.whisper_align.rows;
    const uint cols = args.whisper_align.cols, ldw = args.whisper_align.ldw;
    const uint width = args.whisper_align.width, pad = width / 2;
    const uint j = tg.x * ntg + tid, r = tg.y, t = args.whisper_align.first + r;
    if (j >= cols) return;
    const bool filter = cols > pad;
    float acc = 0.0f;
    for (uint h = 0; h < heads; h++) {
        device const float* row = wa_head(w, args, h) + (ulong)t * ldw;
        const float s = scratch[(ulong)h * rows + t];
        device const float* mean = scratch + (ulong)heads * rows + (ulong)h * cols;
        device const float* sd = mean + (ulong)heads * cols;
        float win[KALIGN_MAX_WIDTH];
        float med;
        if (filter) {
            for (uint k = 0; k < KALIGN_MAX_WIDTH; k++) {
                if (k >= width) break;
                const uint f = wa_frame((int)j - (int)pad + (int)k, (int)cols);
                const float v = (row[f] / s - mean[f]) / sd[f];
                uint b = k; // insertion into the sorted prefix
                while (b > 0 && win[b - 1] > v) {
                    win[b] = win[b - 1];
                    b--;
                }
                win[b] = v;
            }
            med = win[pad];
        } else {
            med = (row[j] / s - mean[j]) / sd[j];
        }
        acc += med / (float)heads;
    }
    const ulong cost = (ulong)heads * (rows + 2 * cols);
    scratch[cost + (ulong)r * cols + j] = -acc;
}

kernel void whisper_align_dtw(device int* out [[buffer(1)]],
                              constant Args& args [[buffer(8)]],
                              device float* scratch [[buffer(10)]],
                              uint tid [[thread_index_in_threadgroup]],
                              uint ntg [[threads_per_threadgroup]]) {
    threadgroup float dh[3][KALIGN_MAX_PATH + 1]; // running costs: the float32 sums
    threadgroup float dl[3][KALIGN_MAX_PATH + 1]; // and their rounding errors
    const uint heads = args.whisper_align.heads, rows = args.whisper_align.rows;
    const uint cols = args.whisper_align.cols;
    const uint path = rows - 1 - args.whisper_align.first;
    const float inf = as_type<float>(0x7f800000u);
    device float* x = scratch + (ulong)heads * (rows + 2 * cols);
    device int* trace = (device int*)(x + (ulong)path * cols);
    const uint w = cols + 1;
    // cost(i, j) (i rows, j frames, both from 1; row and column 0 the
    // borders) is (dh, dl)[(i+j) % 3][i].
    for (uint d = 0; d <= path + cols; d++) {
        const uint cur = d % 3, p1 = (d + 2) % 3, p2 = (d + 1) % 3;
        for (uint i = tid; i <= path; i += ntg) {
            const int j = (int)d - (int)i;
            float ch = inf, cl = 0.0f;
            if (i == 0) {
                ch = d == 0 ? 0.0f : inf;
            } else if (j > 0 && j <= (int)cols) {
                const float h0 = dh[p2][i - 1], l0 = dl[p2][i - 1];
                const float h1 = dh[p1][i - 1], l1 = dl[p1][i - 1];
                const float h2 = dh[p1][i], l2 = dl[p1][i];
                int tr;
                float mh, ml;
                if (wa_less(h0, l0, h1, l1) && wa_less(h0, l0, h2, l2)) {
                    mh = h0;
                    ml = l0;
                    tr = 0;
                } else if (wa_less(h1, l1, h0, l0) && wa_less(h1, l1, h2, l2)) {
                    mh = h1;
                    ml = l1;
                    tr = 1;
                } else {
                    mh = h2;
                    ml = l2;
                    tr = 2;
                }
                // (mh, ml) + v: the sum and its error (two-sum), then
                // renormalised
                const float v = x[(ulong)(i - 1) * cols + (uint)(j - 1)];
                const float s = mh + v, bv = s - mh;
                const float e = (mh - (s - bv)) + (v - bv);
                const float lo = ml + e;
                ch = s + lo;
                cl = lo - (ch - s);
                trace[(ulong)i * w + (uint)j] = tr;
            }
            dh[cur][i] = ch;
            dl[cur][i] = cl;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    threadgroup_barrier(mem_flags::mem_device);
    if (tid != 0) return;
    uint i = path, j = cols;
    while (i > 0 || j > 0) {
        if (i > 0) out[i - 1] = (int)j - 1;
        const int tr = i == 0 ? 2 : j == 0 ? 1 : trace[(ulong)i * w + j];
        if (tr == 0) {
            i--;
            j--;
        } else if (tr == 1) {
            i--;
        } else {
            j--;
        }
    }
}
