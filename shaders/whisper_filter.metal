// Whisper's logit filters (plan.WhisperFilter), in place: threadgroups
// (segments, rows), each over its segment of WhisperSegment tokens of a
// row. Every thread reads the row's short history itself (a few hundred
// ids at most), then adds the table and applies the masks to its own
// columns while reducing the segment's maxima. With the timestamp rules
// the segment's exponential sums follow (a thread reads back only its own
// columns, so no barrier guards x) and go to scratch with the maxima; the
// row's last group to finish (its ticket) combines them into "timestamps
// beat every text token" and masks the text if so. −Inf is tested on the
// bits and never fed to exp or log: fast math may assume there are no
// infinities.
//
// Scratch: WF_PART_WORDS floats per (row, segment): the segment's text
// maximum, timestamp maximum, sum of exp(v − its maximum) over all its
// tokens, and over its timestamps, exp(v − its timestamp maximum).
// Tickets: a word per row.

#define WF_PART_WORDS 4

static inline bool wf_ninf(float v) { return as_type<uint>(v) == 0xff800000u; }

// wf_scaled is s·exp(m − to), nothing when m is −Inf (no token there).
static inline float wf_scaled(float s, float m, float to) { return wf_ninf(m) ? 0.0f : s * exp(m - to); }

kernel void whisper_filter(device float* x [[buffer(0)]],
                           device const float* table [[buffer(1)]],
                           device const int* hist [[buffer(2)]],
                           constant Args& args [[buffer(8)]],
                           device float* scratch [[buffer(10)]],
                           device atomic_uint* tickets [[buffer(11)]],
                           uint2 tg [[threadgroup_position_in_grid]],
                           uint2 ntgs [[threadgroups_per_grid]],
                           uint tid [[thread_index_in_threadgroup]],
                           uint ntg [[threads_per_threadgroup]],
                           uint sg [[simdgroup_index_in_threadgroup]],
                           uint lane [[thread_index_in_simdgroup]],
                           uint nsg [[simdgroups_per_threadgroup]]) {
    threadgroup float part[32];
    threadgroup uint verdict;
    const uint n = args.whisper_filter.n, count = args.whisper_filter.count;
    const uint tb = args.whisper_filter.ts_begin, eot = args.whisper_filter.eot, no_ts = args.whisper_filter.no_ts;
    const uint max_init = args.whisper_filter.max_initial;
    const bool ts = (args.whisper_filter.flags & KFLAG_TIMESTAMPS) != 0;
    const float ninf = as_type<float>(0xff800000u);
    const uint row = tg.y, nseg = ntgs.x;
    const uint seg = (n + nseg - 1) / nseg;
    const uint lo = tg.x * seg, hi = min(lo + seg, n);
    device float* xr = x + (ulong)row * args.whisper_filter.ldx;

    // The sequence so far: is the last token a timestamp, the one before
    // (true with fewer than two tokens), and the last timestamp (−1: none).
    bool last_ts = false, penult_ts = true;
    int last_stamp = -1;
    if (ts && count > 0) {
        device const int* h = hist + (ulong)row * args.whisper_filter.ldh;
        last_ts = h[count - 1] >= (int)tb;
        penult_ts = count < 2 || h[count - 2] >= (int)tb;
        for (uint i = count; i-- > 0;) {
            if (h[i] >= (int)tb) {
                last_stamp = h[i];
                break;
            }
        }
    }
    // timestamps [tb, upto) are masked: not before the last one, and not
    // the last one itself unless it opens a pair
    const uint upto = last_stamp < 0 ? tb : (uint)last_stamp + ((last_ts && !penult_ts) ? 0u : 1u);

    float mtext = ninf, mts = ninf;
    for (uint j = lo + tid; j < hi; j += ntg) {
        float v = xr[j] + table[j];
        if (count == 0) v += table[n + j];
        if (ts) {
            bool mask = j == no_ts || (j >= tb && j < upto);
            if (last_ts) mask = mask || (penult_ts ? j >= tb : j < eot);
            if (count == 0) mask = mask || j < tb || (j >= tb && j - tb > max_init);
            if (mask) v = ninf;
        }
        xr[j] = v;
        if (!wf_ninf(v)) {
            if (j < tb) mtext = max(mtext, v);
            else mts = max(mts, v);
        }
    }
    if (!ts) return;
    mtext = ew_reduce(mtext, 0, part, sg, lane, nsg);
    mts = ew_reduce(mts, 0, part, sg, lane, nsg);
    const float mall = max(mtext, mts);
    float sall = 0.0f, sts = 0.0f;
    if (!wf_ninf(mall)) {
        for (uint j = lo + tid; j < hi; j += ntg) {
            const float v = xr[j];
            if (!wf_ninf(v)) {
                sall += exp(v - mall);
                if (j >= tb) sts += exp(v - mts);
            }
        }
    }
    sall = ew_reduce(sall, 1, part, sg, lane, nsg);
    sts = ew_reduce(sts, 1, part, sg, lane, nsg);
    device float* pr = scratch + (ulong)row * nseg * WF_PART_WORDS;
    if (tid == 0) {
        device float* p = pr + tg.x * WF_PART_WORDS;
        p[0] = mtext;
        p[1] = mts;
        p[2] = sall;
        p[3] = sts;
    }
    if (!group_ticket((device uint*)&tickets[row], nseg, &verdict, tid)) return;
    if (tid == 0) atomic_store_explicit(&tickets[row], 0u, memory_order_relaxed);

    // The row's last group: the maxima, then the sums rescaled to them
    // (segment order within a thread, then ew_reduce's).
    mtext = ninf;
    mts = ninf;
    for (uint s = tid; s < nseg; s += ntg) {
        mtext = max(mtext, pr[s * WF_PART_WORDS]);
        mts = max(mts, pr[s * WF_PART_WORDS + 1]);
    }
    mtext = ew_reduce(mtext, 0, part, sg, lane, nsg);
    mts = ew_reduce(mts, 0, part, sg, lane, nsg);
    // With no text token left the rule changes nothing; with no timestamp
    // left it never fires.
    if (wf_ninf(mtext) || wf_ninf(mts)) return;
    const float rall = max(mtext, mts);
    sall = 0.0f;
    sts = 0.0f;
    for (uint s = tid; s < nseg; s += ntg) {
        device const float* p = pr + s * WF_PART_WORDS;
        sall += wf_scaled(p[2], max(p[0], p[1]), rall);
        sts += wf_scaled(p[3], p[1], mts);
    }
    sall = ew_reduce(sall, 1, part, sg, lane, nsg);
    sts = ew_reduce(sts, 1, part, sg, lane, nsg);
    const float lse = rall + log(sall);
    const float lse_ts = mts + log(sts);
    if (lse_ts - lse > mtext - lse) {
        for (uint j = tid; j < min(tb, n); j += ntg) xr[j] = ninf;
    }
}
