package cpu

import (
	"sync"

	"github.com/harkapp/hark/engine/blas"
)

// Attention over many query rows (LLM prefill, the Whisper encoder, a
// decoder prompt's cross-attention) runs as one pool job per batch of KV
// heads: every item is one head × one block of query rows, whose scores
// product covers only the keys that block's rows see (causal: up to its
// last row), whose softmax runs on the worker's own score block while it
// is in cache, and whose values product follows at once. The per-head path
// (attentionGEMM) ran three pool jobs (three barriers) per head and score
// block: 30 a layer for SmolLM2's 9 heads over 3 KV heads, and 168 a layer
// for the Whisper tiny encoder's 6 heads of 1,500 rows in blocks of 174,
// most of them jobs too small to fill 16 workers; here it is two (the
// packing and the blocks), or one where the products read the keys and
// values in place (attnInPlace). Both products are single-threaded sgemm calls
// on the workers, as gemmSplit makes them.

// attnBlockRows is the query rows of one item: fewer cut more of the masked
// triangle away (the waste is about rows/kvLen of the square), more make
// each sgemm call longer. A variable so tests can force small blocks.
var attnBlockRows = 64

// attnBlockScores bounds one worker's score block (256 KiB, in L2 beside
// the head's keys and values); longer key ranges take fewer rows. A
// variable so benchmarks can sweep the Whisper encoder's block
// (BenchmarkAttentionEncoderBlocks: 43 rows of its 1,500 keys).
var attnBlockScores = 1 << 16

// attnPackFloats bounds the packed f32 keys and values of one job's KV
// heads (8 MiB); more KV heads than fit run as several jobs.
const attnPackFloats = 1 << 21

// attnBlocksOn lets tests turn the blocked path off (the per-head product
// path runs instead).
var attnBlocksOn = true

// useAttnBlocks reports whether the checked product-path dispatch a takes
// the blocked path: the system sgemm must be callable from every worker at
// once, one thread per call.
func (e *Exec) useAttnBlocks(a *attnTask) bool {
	return attnBlocksOn && !e.mm.noBLAS && blas.Available() && blas.Threads() != 0
}

// attnBlockShape is the blocked path's query rows per item and KV heads per
// job for kvLen keys of hd elements.
func attnBlockShape(kvLen, hd, nKV int) (rows, heads int) {
	rows = max(1, min(attnBlockRows, attnBlockScores/max(1, kvLen)))
	heads = max(1, min(nKV, attnPackFloats/max(1, 2*kvLen*hd)))
	return rows, heads
}

// attnBlocksNeeds is the blocked path's scratch: packed keys and values of
// one job's KV heads (none where the products read the cache in place,
// attnInPlace), then one score block per worker.
func attnBlocksNeeds(kvLen, hd, nKV, workers int, inPlace bool) int {
	rows, heads := attnBlockShape(kvLen, hd, nKV)
	pack := satMul(heads, satMul(2*kvLen, hd))
	if inPlace {
		pack = 0
	}
	return satAdd(pack, satMul(workers, satMul(rows, kvLen)))
}

// attnInPlace reports whether the blocked path's products read the f32
// keys and values where they are (sgemm takes their position stride as
// its leading dimension) instead of packed copies: non-causal attention
// (the Whisper encoder, cross-attention) over a cache all of whose keys
// are written. The copies cost a job, its barrier and 4.6 MB of writes a
// Whisper tiny encoder layer; causal dispatches keep them (chunk.go's
// chunks read only their keys, as zeros past what is written).
func attnInPlace(a *attnTask) bool {
	return !a.causal && a.k.h == nil && a.written >= a.kvLen
}

// attentionBlocks runs the checked dispatch a (useAttnBlocks) on the
// blocked path.
func (e *Exec) attentionBlocks(a *attnTask, nKV int) error {
	hd, kv := a.hd, a.kvLen
	rows, heads := attnBlockShape(kv, hd, nKV)
	inPlace := attnInPlace(a)
	if inPlace {
		heads = nKV
	}
	workers := e.pool.Workers()
	packN := heads * kv * hd
	if inPlace {
		packN = 0
	}
	buf := e.ensureAttn(attnBlocksNeeds(kv, hd, nKV, workers, inPlace))
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
	seen := kv
	if a.causal {
		seen = min(kv, a.pos0+a.m)
	}
	for g0 := 0; g0 < nKV; g0 += heads {
		g1 := min(nKV, g0+heads)
		kp, vp := buf[:packN], buf[packN:2*packN]
		if !inPlace {
			*pk = attnPackRows{k: a.k, v: a.v, g0: g0, hs: a.hs, ps: a.ps, hd: hd, kvLen: kv, seen: seen, kp: kp, vp: vp}
			e.pool.Run((g1-g0)*seen, chunkGrain(4*hd), pk)
		}
		*bt = attnBlockTask{a: a, g0: g0, g1: g1, kp: kp, vp: vp, inPlace: inPlace, rows: rows, nb: nb, s: buf[2*packN:], sw: rows * kv}
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
	kp, vp   []float32 // packed keys and values (nil inPlace)
	inPlace  bool      // the products read a.k.f and a.v.f (attnInPlace)
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
	vis := kv
	if a.causal {
		vis = min(kv, a.pos0+t1)
	}
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
	var kp, vp []float32
	ldk := hd
	if t.inPlace {
		off := h/a.group*a.hs + first*a.ps
		kp, vp, ldk = a.k.f[off:], a.v.f[off:], a.ps
	} else {
		g := h/a.group - t.g0
		kp = t.kp[(g*kv+first)*hd : (g*kv+vis)*hd]
		vp = t.vp[(g*kv+first)*hd : (g*kv+vis)*hd]
	}
	if err := blas.Sgemm(false, true, rows, n, hd, 1, a.q[t0*a.ldq+h*hd:], a.ldq, kp, ldk, 0, s, ld); err != nil {
		return err
	}
	for i := range rows {
		qpos := a.pos0 + t0 + i
		nvis := kv
		if a.causal {
			nvis = min(kv, qpos+1)
		}
		lo, hi := windowStart(qpos, a.window, nvis)-first, nvis-first
		row := s[i*ld : i*ld+n]
		softmaxScaled(row[lo:hi], a.scale)
		clear(row[:lo])
		clear(row[hi:])
	}
	return blas.Sgemm(false, false, rows, hd, n, 1, s, ld, vp, ldk, 0, o, a.ldo)
}
