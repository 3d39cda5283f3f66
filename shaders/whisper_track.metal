// One step of a Whisper window's state (plan.WhisperTrack), after
// whisper_filter and argmax: the chosen token's log-probability, the stop
// rules and the token the next step embeds, so a greedy window runs with
// no host in between. Threadgroups over segments of WhisperSegment
// tokens: each reduces its segment to a maximum and a sum of exp(v − it)
// (float32, −Inf skipped on the bits, as whisper_filter) in scratch, two
// floats a segment; the last group to finish (a ticket word) combines
// them into the log-sum-exp, runs the repetition guard one thread per
// unit length and writes the state from thread 0. Every group reads the
// status before its ticket and the last writes it only after every
// ticket, so all agree on it.

static inline bool wt_ninf(float v) { return as_type<uint>(v) == 0xff800000u; }

kernel void whisper_track(device const float* x [[buffer(0)]],
                          device const int* choice [[buffer(1)]],
                          device int* track [[buffer(2)]],
                          device int* next [[buffer(3)]],
                          constant Args& args [[buffer(8)]],
                          device float* scratch [[buffer(10)]],
                          device atomic_uint* tickets [[buffer(11)]],
                          uint g [[threadgroup_position_in_grid]],
                          uint nseg [[threadgroups_per_grid]],
                          uint tid [[thread_index_in_threadgroup]],
                          uint ntg [[threads_per_threadgroup]],
                          uint sg [[simdgroup_index_in_threadgroup]],
                          uint lane [[thread_index_in_simdgroup]],
                          uint nsg [[simdgroups_per_threadgroup]]) {
    threadgroup float part[32];
    threadgroup int cuts[KTRACK_REPEAT_MAX_UNIT];
    threadgroup uint verdict;
    const uint n = args.whisper_track.n, cap = args.whisper_track.cap;
    const uint count = args.whisper_track.count;
    const bool start = (args.whisper_track.flags & KFLAG_TRACK_START) != 0;
    const float ninf = as_type<float>(0xff800000u);
    device int* toks = track + KTRACK_HEADER;
    device int* lps = track + KTRACK_HEADER + cap;
    const uint seg = (n + nseg - 1) / nseg;
    const uint lo = g * seg, hi = min(lo + seg, n);

    if (!start && track[0] != 0) return; // the window has stopped
    const int tok = start ? (int)args.whisper_track.token : choice[0];
    if (!start && (count >= cap || tok < 0 || (uint)tok >= n)) {
        if (tid == 0) track[0] = 2; // no room (the CPU refuses a bad token)
        return;
    }

    float m = ninf;
    for (uint j = lo + tid; j < hi; j += ntg) {
        const float v = x[j];
        if (!wt_ninf(v)) m = max(m, v);
    }
    m = ew_reduce(m, 0, part, sg, lane, nsg);
    float s = 0.0f;
    if (!wt_ninf(m)) {
        for (uint j = lo + tid; j < hi; j += ntg) {
            const float v = x[j];
            if (!wt_ninf(v)) s += exp(v - m);
        }
    }
    s = ew_reduce(s, 1, part, sg, lane, nsg);
    if (tid == 0) {
        scratch[2 * g] = m;
        scratch[2 * g + 1] = s;
    }
    if (!group_ticket((device uint*)tickets, nseg, &verdict, tid)) return;
    if (tid == 0) atomic_store_explicit(tickets, 0u, memory_order_relaxed);
    // the last group: the row's maximum, then the sums rescaled to it
    m = ninf;
    for (uint i = tid; i < nseg; i += ntg) m = max(m, scratch[2 * i]);
    m = ew_reduce(m, 0, part, sg, lane, nsg);
    s = 0.0f;
    for (uint i = tid; i < nseg; i += ntg) {
        const float mi = scratch[2 * i];
        if (!wt_ninf(mi)) s += scratch[2 * i + 1] * exp(mi - m);
    }
    s = ew_reduce(s, 1, part, sg, lane, nsg);
    const float lse = wt_ninf(m) ? ninf : m + log(s);
    const float lp = x[tok] - lse;

    if (start) {
        if (tid == 0) {
            for (uint i = 0; i < KTRACK_HEADER; i++) track[i] = 0;
            track[3] = as_type<int>(lp);
            track[4] = (int)args.whisper_track.limit;
            track[5] = (int)args.whisper_track.end_ts;
        }
        return;
    }

    // The repetition guard over the kept tokens with tok appended; unit
    // length tid+1, the shortest that finds a loop wins (as on the host).
    const uint rep_unit = args.whisper_track.rep_unit, rep_min = args.whisper_track.rep_min;
    const int tb = (int)args.whisper_track.ts_begin;
    const bool eot = (uint)tok == args.whisper_track.eot;
    const uint kept = count + 1;
    if (tid < rep_unit && tid < KTRACK_REPEAT_MAX_UNIT) {
        const uint u = tid + 1;
        int cut = -1;
        if (!eot && rep_min * u <= kept) {
            uint reps = 1;
            while ((reps + 1) * u <= kept) {
                bool match = true;
                for (uint i = 1; i <= u && match; i++) {
                    const uint ia = kept - i, ib = kept - i - reps * u;
                    const int a = ia == count ? tok : toks[ia];
                    const int b = ib == count ? tok : toks[ib];
                    match = a == b || (a >= tb && b >= tb);
                }
                if (!match) break;
                reps++;
            }
            if (reps >= rep_min && reps * u >= args.whisper_track.rep_span) cut = (int)(kept - (reps - 1) * u);
        }
        cuts[tid] = cut;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tid != 0) return;
    lps[count] = as_type<int>(lp);
    track[2] = (int)count + 1;
    if (eot) {
        track[0] = 1;
        return;
    }
    toks[count] = tok;
    track[1] = (int)kept;
    if (has_bind(args, WHISPER_TRACK_NEXT)) next[0] = tok;
    int cut = -1;
    for (uint u = 0; u < min(rep_unit, (uint)KTRACK_REPEAT_MAX_UNIT) && cut < 0; u++) cut = cuts[u];
    const int end_ts = track[5];
    if (cut >= 0) {
        track[0] = 4;
        track[1] = cut;
    } else if (end_ts > 0 && tok >= end_ts) {
        track[0] = 3;
    } else if ((int)kept >= track[4]) {
        track[0] = 2;
    }
}
