package cpu

import (
	"github.com/harkapp/hark/engine/plan"
)

// attnTask computes one (query row, head) pair per item: scores against the
// visible keys, a max-subtracted softmax, and the weighted sum of values.
type attnTask struct {
	q, out, probs  []float32
	k, v           typed
	hd, nHead      int
	group          int // query heads per KV head
	m              int
	ldq, ldo, ldp  int
	kvLen, pos0    int
	written        int // keys from here on are not yet this step's: read as zeros (chunk.go)
	window         int // sliding window (0 = none)
	causal, perSeq bool
	scale          float32
	hs, ps, ss     int
	scores         [][]float32
	kvs            [][]kvSpan // per worker: an f16 cache's span
}

func (a *attnTask) Do(w, lo, hi int) {
	for it := lo; it < hi; it++ {
		q, o, s, first, nvis, off := a.item(it, a.scores[w])
		clear(o)
		if nvis == first {
			continue // nothing visible: the output is zero
		}
		if a.k.h != nil {
			sp := a.kvs[w][:1]
			sp[0] = kvSpan{off, nvis - first}
			keyScoresF16(s[first:nvis], q, a.k.h, sp, a.ps, a.scale)
			softmaxScaled(s[first:nvis], 1)
			addValuesF16(o, s[first:nvis], a.v.h, sp, a.ps)
			continue
		}
		keyScoresF32(s[first:nvis], q, a.k.f[off:], a.ps, a.scale)
		softmaxScaled(s[first:nvis], 1)
		addValuesF32(o, s[first:nvis], a.v.f[off:], a.ps)
	}
}

// item is itemView and the item's score row s (the probs row where probs
// are bound, else scratch), its scores outside the window cleared.
func (a *attnTask) item(it int, scratch []float32) (q, o, s []float32, first, nvis, off int) {
	q, o, first, nvis, off = a.itemView(it)
	if a.probs != nil {
		// the probs row doubles as score storage
		r := (it%a.nHead*a.m + it/a.nHead) * a.ldp
		s = a.probs[r : r+a.kvLen]
		clear(s[nvis:])
	} else {
		s = scratch[:nvis]
	}
	s = s[:nvis]
	clear(s[:first]) // keys before the window get probability 0
	return q, o, s, first, nvis, off
}

// itemView is the (query row, head) pair it's query q and output o, its
// first and end visible keys, and the offset of its first visible key in
// the caches.
func (a *attnTask) itemView(it int) (q, o []float32, first, nvis, off int) {
	hd := a.hd
	t, h := it/a.nHead, it%a.nHead
	seq, qpos := 0, a.pos0+t
	if a.perSeq {
		seq, qpos = t, a.pos0
	}
	nvis = a.kvLen
	if a.causal {
		nvis = min(nvis, qpos+1)
	}
	first = windowStart(qpos, a.window, nvis)
	base := seq*a.ss + (h/a.group)*a.hs
	q = a.q[t*a.ldq+h*hd : t*a.ldq+h*hd+hd]
	o = a.out[t*a.ldo+h*hd : t*a.ldo+h*hd+hd]
	return q, o, first, nvis, base + first*a.ps
}

// keyScoresF32 sets s[j] = scale·(q·k_j) for the f32 keys k_j =
// k[j·ps:j·ps+len(q)]; amd64 replaces it with keyScoresF32Fast (four keys
// a call instead of one: the Whisper decoder's cross-attention scores
// 1500 keys per head and token).
var keyScoresF32 = keyScoresF32Generic

func keyScoresF32Generic(s, q, k []float32, ps int, scale float32) {
	for j := range s {
		s[j] = attnDotF32(q, k[j*ps:]) * scale
	}
}

// addValuesF32 adds p[j] times the f32 value v[j·ps:j·ps+len(o)] to o, in
// order of j; amd64 replaces it with addValuesF32Fast (the output stays in
// registers over all keys).
var addValuesF32 = addValuesF32Generic

func addValuesF32Generic(o, p, v []float32, ps int) {
	for j, pj := range p {
		axpyF32(o, pj, v[j*ps:j*ps+len(o)])
	}
}

// attnGrain is the pool grain of single-query attention's n (row, head)
// items of perItem element-ops each: chunkGrain's, but once the job is
// split at all, chunks of at most a quarter of a worker's share. A few
// items in chunks of chunkGrain's size split badly: a decode step's 9
// heads (SmolLM2) in chunks of 3 or 7 went 6:3 or 7:2 over 2 workers, in
// chunks of 2 they go 5:4.
func attnGrain(n, workers, perItem int) int {
	g := chunkGrain(perItem)
	if g >= n {
		return g
	}
	return min(g, grainFor(n, workers, 1))
}

// windowStart is the first key a query at position qpos sees with a
// sliding window of w keys (0 = no window), at most nvis.
func windowStart(qpos, w, nvis int) int {
	if w <= 0 {
		return 0
	}
	return min(max(0, qpos-w+1), nvis)
}

// attnDotF32 uses the product's dot (SIMD where the CPU has it).
func attnDotF32(a, b []float32) float32 { return dotF32(a, b[:len(a)]) }

// axpyF32 adds p·v to o: the f32 value accumulation's portable path for
// head dimensions the block kernel does not take. amd64 replaces it with
// an AVX2 version.
var axpyF32 = axpyF32Generic

func axpyF32Generic(o []float32, p float32, v []float32) {
	v = v[:len(o)]
	for i := range o {
		o[i] += p * v[i]
	}
}

func axpyHalfGeneric(o []float32, p float32, v []uint16) {
	v = v[:len(o)]
	lut := f16Table
	i := 0
	for ; i+4 <= len(o); i += 4 {
		o0, o1, o2, o3 := o[i]+p*lut[v[i]], o[i+1]+p*lut[v[i+1]], o[i+2]+p*lut[v[i+2]], o[i+3]+p*lut[v[i+3]]
		o[i], o[i+1], o[i+2], o[i+3] = o0, o1, o2, o3
	}
	for ; i < len(o); i++ {
		o[i] += p * lut[v[i]]
	}
}

// maxKV bounds the keys one attention dispatch sees, and so its score
// scratch (a zero position stride would otherwise let any kvLen pass the
// bounds check).
const maxKV = 1 << 22

// attention (plan.AttentionArgs). Probabilities of masked keys (j < kvLen) are written as zero; a query
// that sees no key gets a zero output.
func (e *Exec) attention(d *plan.Dispatch) error {
	p := plan.DecodeAttention(d)
	a := &e.attnT
	*a = attnTask{hd: p.HeadDim, nHead: p.NHead, m: p.M, ldq: p.Ldq, ldo: p.Ldo,
		kvLen: p.KVLen, pos0: p.Pos0, window: p.Window, causal: p.Flags&plan.FlagCausal != 0, perSeq: p.Flags&plan.FlagPerSeqRows != 0,
		scale: p.Scale, hs: p.HeadStride, ps: p.PosStride, ss: p.SeqStride, ldp: p.Ldp, written: p.KVLen}
	if e.keysWritten >= 0 {
		a.written = min(a.written, e.keysWritten)
	}
	nKV := p.NKV
	if err := p.Check(); err != nil {
		return e.errf("%v", err)
	}
	if a.m == 0 || a.nHead == 0 {
		return nil
	}
	var err error
	if a.q, err = e.f32(d, 0, extent(a.m, a.ldq, satMul(a.nHead, a.hd))); err != nil {
		return err
	}
	return e.attend(d, a, nKV, true)
}

// attend runs a, whose q is set, over the caches at slots 1 and 2 into
// out at slot 3 (and probs at slot 4 when withProbs and bound): the part
// Attention and RopeAttention share.
func (e *Exec) attend(d *plan.Dispatch, a *attnTask, nKV int, withProbs bool) error {
	if a.kvLen > maxKV {
		return e.errf("kvLen %d beyond the supported %d", a.kvLen, maxKV)
	}
	a.group = a.nHead / nKV
	w := satMul(a.nHead, a.hd)
	var err error
	if a.out, err = e.f32(d, 3, extent(a.m, a.ldo, w)); err != nil {
		return err
	}
	seqs := 1
	if a.perSeq {
		seqs = a.m
	}
	need := cacheExtent(seqs, a.ss, nKV, a.hs, a.kvLen, a.ps, a.hd)
	if a.k, err = e.typedView(d, 1, need); err != nil {
		return err
	}
	if a.v, err = e.typedView(d, 2, need); err != nil {
		return err
	}
	if withProbs && present(d, 4) {
		if a.probs, err = e.f32(d, 4, extent(satMul(a.nHead, a.m), a.ldp, a.kvLen)); err != nil {
			return err
		}
		if a.kvLen == 0 {
			a.probs = nil
		}
	} else {
		e.ensureWorker(a.kvLen)
	}
	a.scores = e.wsf
	e.ensureSpans(1)
	a.kvs = e.wss
	switch {
	case useAttnGEMM(a):
		err = e.attentionGEMM(a, nKV)
	case e.useAttnWide(a):
		e.attendWide(a)
	default:
		e.pool.Run(a.m*a.nHead, attnGrain(a.m*a.nHead, e.pool.Workers(), satMul(a.kvLen, 2*a.hd)), a)
	}
	*a = attnTask{}
	return err
}
