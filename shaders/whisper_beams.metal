// One step of a Whisper beam search ranked on the backend
// (plan.WhisperBeams; the CPU's and the host's is plan.BeamsStep, which
// this follows rule for rule). One threadgroup: the beams' equal rows and
// the candidates (a thread each), then each candidate's repeats and its
// rank (it counts the better ones, on integer keys: wb_key), then thread 0
// walks the ranking (a few dozen candidates) and writes the state's
// header, sums, sources and tokens, then every thread moves token
// columns: it loads column p of every beam's row before it stores the
// column's new rows and finished entries, so no thread reads what another
// writes. Every thread reads the status before the first barrier and
// thread 0 writes it only after, so all agree on it.

#define WB_MAXC (KBEAMS_MAX * (KBEAMS_MAX + 1))

// wb_key orders scores as plan.rankKey: float order, -0 as +0, NaN as -Inf.
static inline int wb_key(float f) {
    uint b = as_type<uint>(f);
    if ((b & 0x7fffffffu) > 0x7f800000u) b = 0xff800000u;
    else if (b == 0x80000000u) b = 0u;
    const int i = as_type<int>(b);
    return i < 0 ? (i ^ 0x7fffffff) : i;
}

kernel void whisper_beams(device const float* top [[buffer(0)]],
                          device int* hist [[buffer(1)]],
                          device int* state [[buffer(2)]],
                          device int* src [[buffer(3)]],
                          device int* next [[buffer(4)]],
                          constant Args& args [[buffer(8)]],
                          uint tid [[thread_index_in_threadgroup]],
                          uint ntg [[threads_per_threadgroup]]) {
    threadgroup int eqm[KBEAMS_MAX * KBEAMS_MAX]; // rows a and b equal
    threadgroup int ctok[WB_MAXC];
    threadgroup float cscore[WB_MAXC];
    threadgroup float kscore[WB_MAXC]; // a kept candidate's score: its last repeat's
    threadgroup int kbeam[WB_MAXC];    // its beam (the last repeat's); -1: a repeat
    threadgroup int order[WB_MAXC];
    threadgroup int nsrc[KBEAMS_MAX], ntok[KBEAMS_MAX];
    threadgroup int eb[WB_MAXC + KBEAMS_MAX], et[WB_MAXC + KBEAMS_MAX]; // entries added: row, token or -1
    threadgroup int plan_[3];                                           // entries added, beams updated (0/1), first entry

    const uint rows = args.whisper_beams.beams, cap = args.whisper_beams.cap, ldt = args.whisper_beams.ldt;
    const uint fincap = args.whisper_beams.fin;
    const int eot = (int)args.whisper_beams.eot;
    if (state[0] != 0) return; // the search has stopped
    const int nbi = state[3], ci = state[1];
    if (nbi < 1 || (uint)nbi > min(rows, (uint)KBEAMS_MAX) || ci < 0 || (uint)ci >= cap) {
        if (tid == 0) state[0] = 3; // no room (the host checks first)
        return;
    }
    const uint nb = (uint)nbi, c = (uint)ci, k = nb + 1, n = nb * k;
    device int* sums = state + KBEAMS_HEADER;
    device int* fin = state + KBEAMS_HEADER + rows;

    for (uint p = tid; p < nb * nb; p += ntg) {
        const uint a = p / nb, b = p % nb;
        int e = 1;
        for (uint i = 0; i < c && e; i++) e = hist[a * cap + i] == hist[b * cap + i];
        eqm[p] = e;
    }
    for (uint i = tid; i < n; i += ntg) {
        device const float* r = top + (i / k) * ldt;
        ctok[i] = as_type<int>(r[1 + 2 * (i % k)]);
        cscore[i] = as_type<float>(sums[i / k]) + r[2 + 2 * (i % k)];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    // a candidate repeating an earlier one's sequence is dropped; the
    // earlier takes the last repeat's score and beam
    for (uint i = tid; i < n; i += ntg) {
        bool kept = true;
        for (uint x = 0; x < i && kept; x++) kept = !(ctok[x] == ctok[i] && eqm[(x / k) * nb + i / k]);
        float s = cscore[i];
        int b = (int)(i / k);
        for (uint x = i + 1; x < n; x++) {
            if (ctok[x] == ctok[i] && eqm[(x / k) * nb + i / k]) {
                s = cscore[x];
                b = (int)(x / k);
            }
        }
        kscore[i] = s;
        kbeam[i] = kept ? b : -1;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint i = tid; i < n; i += ntg) {
        if (kbeam[i] < 0) continue;
        const int ki = wb_key(kscore[i]);
        uint r = 0;
        for (uint x = 0; x < n; x++) {
            if (kbeam[x] < 0) continue;
            const int kx = wb_key(kscore[x]);
            r += (kx > ki || (kx == ki && x < i)) ? 1u : 0u;
        }
        order[r] = (int)i;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    if (tid == 0) {
        uint kept = 0;
        for (uint i = 0; i < n; i++) kept += kbeam[i] >= 0 ? 1u : 0u;
        const int end = state[6];
        const uint maxc = (uint)max(state[5], 0);
        uint f = (uint)max(state[2], 0), added = 0, live = 0;
        int nexti[KBEAMS_MAX];
        for (uint r = 0; r < kept; r++) {
            const int i = order[r], t = ctok[i];
            if (t == eot || (end > 0 && t >= end)) {
                if (f < maxc && f < fincap) {
                    device int* e = fin + f * (cap + 2);
                    e[0] = (int)c + (t == eot ? 0 : 1);
                    e[1] = as_type<int>(kscore[i]);
                    eb[added] = kbeam[i];
                    et[added] = t == eot ? -1 : t;
                    added++;
                    f++;
                }
                continue;
            }
            nexti[live++] = i;
            if (live == nb) break;
        }
        int status = 0;
        if (live == 0) {
            status = 2;
        } else {
            for (uint d = live; d < nb; d++) nexti[d] = nexti[d % live];
            for (uint d = 0; d < nb; d++) {
                const int i = nexti[d];
                nsrc[d] = kbeam[i];
                ntok[d] = ctok[i];
                sums[d] = as_type<int>(kscore[i]);
                src[d] = kbeam[i];
                next[d] = ctok[i];
            }
            for (uint d = nb; d < rows; d++) {
                src[d] = (int)d;
                next[d] = eot; // a token to embed
            }
            state[1] = (int)c + 1;
            if (f >= maxc) status = 1;
            else if ((int)c + 1 >= state[4]) status = 3;
            if (status != 0 && f < nb) {
                // the live beams by sum, a repeat (the same row and token
                // as a beam before it) once
                for (uint r = 0; r < nb && f < nb && f < fincap; r++) {
                    uint d = 0;
                    for (uint x = 0; x < nb; x++) {
                        const int kx = wb_key(as_type<float>(sums[x]));
                        uint rx = 0;
                        for (uint y = 0; y < nb; y++) {
                            const int ky = wb_key(as_type<float>(sums[y]));
                            rx += (ky > kx || (ky == kx && y < x)) ? 1u : 0u;
                        }
                        if (rx == r) d = x;
                    }
                    bool dup = false;
                    for (uint y = 0; y < nb && !dup; y++) {
                        if (y == d) continue;
                        const int ky = wb_key(as_type<float>(sums[y])), kd = wb_key(as_type<float>(sums[d]));
                        const bool before = ky > kd || (ky == kd && y < d);
                        dup = before && ntok[y] == ntok[d] && eqm[nsrc[y] * nb + nsrc[d]];
                    }
                    if (dup) continue;
                    device int* e = fin + f * (cap + 2);
                    e[0] = (int)c + 1;
                    e[1] = sums[d];
                    eb[added] = nsrc[d];
                    et[added] = ntok[d];
                    added++;
                    f++;
                }
            }
        }
        state[2] = (int)f;
        if (status != 0) state[0] = status;
        plan_[0] = (int)added;
        plan_[1] = live > 0 ? 1 : 0;
        plan_[2] = (int)(f - added);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    // token columns: the entries added, then the beams' new rows
    const uint added = (uint)plan_[0];
    const bool moved = plan_[1] != 0;
    const uint f0 = (uint)plan_[2];
    for (uint p = tid; p <= c; p += ntg) {
        int v[KBEAMS_MAX];
        if (p < c) {
            for (uint s = 0; s < nb; s++) v[s] = hist[s * cap + p];
        }
        for (uint e = 0; e < added; e++) {
            device int* w = fin + (f0 + e) * (cap + 2) + 2;
            if (p < c) w[p] = v[eb[e]];
            else if (et[e] >= 0) w[p] = et[e];
        }
        if (moved) {
            for (uint d = 0; d < nb; d++) hist[d * cap + p] = p < c ? v[nsrc[d]] : ntok[d];
        }
    }
}
