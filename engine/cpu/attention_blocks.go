package cpu

import (
	"sync"

	"github.com/harkapp/hark/engine/blas"
)

// Causal attention over many query rows (LLM prefill) runs as one pool job
// per batch of KV heads: every item is one head × one block of query rows,
// whose scores product covers only the keys that block's last row sees,
// whose softmax runs on the worker's own score block while it is in cache,
// and whose values product follows at once. The per-head path
// (attentionGEMM) computed the whole square of scores, half of them masked,
// and ran three pool jobs (three barriers) per head: 30 a layer for
// SmolLM2's 9 heads over 3 KV heads, against one here. Both products are
// single-threaded sgemm calls on the workers, as gemmSplit makes them.

// attnBlockRows is the query rows of one item: fewer cut more of the masked
// triangle away (the waste is about rows/kvLen of the square), more make
// each sgemm call longer. A variable so tests can force small blocks.
var attnBlockRows = 64

// attnBlockScores bounds one worker's score block (256 KiB, in L2 beside
// the head's keys and values); longer key ranges take fewer rows.
const attnBlockScores = 1 << 16

// attnPackFloats bounds the packed f32 keys and values of one job's KV
// heads (8 MiB); more KV heads than fit run as several jobs.
const attnPackFloats = 1 << 21

// attnBlocksOn lets tests turn the blocked path off (the per-head product
// path runs instead).
var attnBlocksOn = true

// useAttnBlocks reports whether the checked product-path dispatch a takes
// the blocked causal path: the system sgemm must be callable from every
// worker at once, one thread per call.
func (e *Exec) useAttnBlocks(a *attnTask) bool {
	return attnBlocksOn && a.causal && !e.mm.noBLAS && blas.Available() && blas.Threads() != 0
}

// attnBlockShape is the blocked path's query rows per item and KV heads per
// job for kvLen keys of hd elements.
func attnBlockShape(kvLen, hd, nKV int) (rows, heads int) {
	rows = max(1, min(attnBlockRows, attnBlockScores/max(1, kvLen)))
	heads = max(1, min(nKV, attnPackFloats/max(1, 2*kvLen*hd)))
	return rows, heads
}

// attnBlocksNeeds is the blocked path's scratch: packed keys and values of
// one job's KV heads, then one score block per worker.
func attnBlocksNeeds(kvLen, hd, nKV, workers int) int {
	rows, heads := attnBlockShape(kvLen, hd, nKV)
	return satAdd(satMul(heads, satMul(2*kvLen, hd)), satMul(workers, satMul(rows, kvLen)))
}

// attentionBlocks runs the checked dispatch a (useAttnBlocks) on the
// blocked path.
func (e *Exec) attentionBlocks(a *attnTask, nKV int) error {
	hd, kv := a.hd, a.kvLen
	rows, heads := attnBlockShape(kv, hd, nKV)
	workers := e.pool.Workers()
	packN := heads * kv * hd
	buf := e.ensureAttn(attnBlocksNeeds(kv, hd, nKV, workers))
	if blas.Threads() != 1 {
		blas.SetThreads(1)
	}
	pk, bt := &e.packB, &e.blockT
	defer func() { *pk, *bt = attnPackRows{}, attnBlockTask{} }()
	nb := (a.m + rows - 1) / rows
	// block reads keys below vis = pos0 + its last row only: a chunk's
	// dispatch (chunk.go) spans the whole step's kvLen but sees the
	// keys up to its own rows, so packing the rest cost each of a pp512's
	// 8 chunks the step's whole cache
	seen := min(kv, a.pos0+a.m)
	for g0 := 0; g0 < nKV; g0 += heads {
		g1 := min(nKV, g0+heads)
		kp, vp := buf[:packN], buf[packN:2*packN]
		*pk = attnPackRows{k: a.k, v: a.v, g0: g0, hs: a.hs, ps: a.ps, hd: hd, kvLen: kv, seen: seen, kp: kp, vp: vp}
		e.pool.Run((g1-g0)*seen, chunkGrain(4*hd), pk)
		*bt = attnBlockTask{a: a, g0: g0, g1: g1, kp: kp, vp: vp, rows: rows, nb: nb, s: buf[2*packN:], sw: rows * kv}
		// one item per chunk: the causal items' costs differ by up to nb×,
		// and the costliest come first (Do), so the pool's dynamic chunks
		// balance them
		e.pool.Run((g1-g0)*a.group*nb, 1, bt)
		if bt.err != nil {
			return e.errf("attention: %v", bt.err)
		}
	}
	return nil
}

// attnPackRows copies key positions [0, seen) of KV heads g0.. into kp
// and vp, each [head][kvLen][hd] f32; one item is one (head, position).
type attnPackRows struct {
	k, v                        typed
	g0, hs, ps, hd, kvLen, seen int
	kp, vp                      []float32
}

func (p *attnPackRows) Do(_, lo, hi int) {
	hd := p.hd
	for it := lo; it < hi; it++ {
		g, j := it/p.seen, it%p.seen
		src := (p.g0+g)*p.hs + j*p.ps
		dst := (g*p.kvLen + j) * hd
		if p.k.h != nil {
			kr, vr := p.kp[dst:dst+hd], p.vp[dst:dst+hd]
			for i, b := range p.k.h[src : src+hd] {
				kr[i] = f16Table[b]
			}
			for i, b := range p.v.h[src : src+hd] {
				vr[i] = f16Table[b]
			}
			continue
		}
		copy(p.kp[dst:dst+hd], p.k.f[src:src+hd])
		copy(p.vp[dst:dst+hd], p.v.f[src:src+hd])
	}
}

// attnBlockTask is one job of the blocked path over KV heads [g0, g1).
type attnBlockTask struct {
	a        *attnTask
	g0, g1   int
	kp, vp   []float32
	rows, nb int
	s        []float32 // score blocks, sw floats per worker
	sw       int
	mu       sync.Mutex
	err      error
}

func (t *attnBlockTask) Do(w, lo, hi int) {
	heads := (t.g1 - t.g0) * t.a.group
	for it := lo; it < hi; it++ {
		b := t.nb - 1 - it/heads // last (costliest) blocks first
		if err := t.block(w, t.g0*t.a.group+it%heads, b); err != nil {
			t.mu.Lock()
			if t.err == nil {
				t.err = err
			}
			t.mu.Unlock()
		}
	}
}

// block computes query rows [b·rows, b·rows+rows) of head h.
func (t *attnBlockTask) block(w, h, b int) error {
	a := t.a
	hd, kv := a.hd, a.kvLen
	t0 := b * t.rows
	t1 := min(a.m, t0+t.rows)
	rows := t1 - t0
	// keys [first, vis) cover every row of the block: the last row sees
	// the most, the first row's window starts earliest
	vis := min(kv, a.pos0+t1)
	first := windowStart(a.pos0+t0, a.window, vis)
	n := vis - first
	o := a.out[t0*a.ldo+h*hd:]
	if a.probs != nil {
		for i := range rows {
			r := a.probs[(h*a.m+t0+i)*a.ldp:]
			clear(r[:first])
			clear(r[vis:kv])
		}
	}
	if n == 0 {
		for i := range rows {
			clear(o[i*a.ldo : i*a.ldo+hd])
		}
		return nil
	}
	s, ld := t.s[w*t.sw:(w+1)*t.sw], n
	if a.probs != nil {
		s, ld = a.probs[(h*a.m+t0)*a.ldp+first:], a.ldp
	}
	g := h/a.group - t.g0
	kp := t.kp[(g*kv+first)*hd : (g*kv+vis)*hd]
	vp := t.vp[(g*kv+first)*hd : (g*kv+vis)*hd]
	if err := blas.Sgemm(false, true, rows, n, hd, 1, a.q[t0*a.ldq+h*hd:], a.ldq, kp, hd, 0, s, ld); err != nil {
		return err
	}
	for i := range rows {
		qpos := a.pos0 + t0 + i
		nvis := min(kv, qpos+1)
		lo, hi := windowStart(qpos, a.window, nvis)-first, nvis-first
		row := s[i*ld : i*ld+n]
		softmaxScaled(row[lo:hi], a.scale)
		clear(row[:lo])
		clear(row[hi:])
	}
	return blas.Sgemm(false, false, rows, hd, n, 1, s, ld, vp, hd, 0, o, a.ldo)
}
