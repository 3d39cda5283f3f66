package cpu

import (
	"unsafe"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// Attention over many query rows (prefill chunks, the Whisper encoder and
// cross-attention) runs as two matrix products per head on MM's product:
// S = Q·Kᵀ, then row softmax (scale, causal mask), then O = P·V. K and V of
// the KV head are first packed into contiguous f32 (K as rows, V
// transposed) so both products see ordinary weight matrices. Decode (one
// row) and per-sequence rows keep the direct kernel: packing would cost as
// much as the work.

// gemmAttnMinM is the query row count from which the product path wins.
const gemmAttnMinM = 16

// attnPackTask copies key positions [lo, hi) of one KV head into kp
// ([kvLen][hd]) and vt ([hd][kvLen]); those from written on as zeros:
// a chunk of a step (chunk.go) sees the step's kvLen, so its products
// have the whole step's shapes and rounding, but the later chunks' keys
// are not in the cache yet, and a stale value there (an f16 infinity)
// times its zero probability would be NaN.
type attnPackTask struct {
	k, v         typed
	base, ps, hd int
	kvLen        int
	written      int
	kp, vt       []float32
}

func (p *attnPackTask) Do(_, lo, hi int) {
	hd := p.hd
	for j := lo; j < hi; j++ {
		src := p.base + j*p.ps
		kr := p.kp[j*hd : j*hd+hd]
		if j >= p.written {
			clear(kr)
			for i := range hd {
				p.vt[i*p.kvLen+j] = 0
			}
			continue
		}
		if p.k.h != nil {
			for i, b := range p.k.h[src : src+hd] {
				kr[i] = f16Table[b]
			}
			for i, b := range p.v.h[src : src+hd] {
				p.vt[i*p.kvLen+j] = f16Table[b]
			}
			continue
		}
		copy(kr, p.k.f[src:src+hd])
		for i, x := range p.v.f[src : src+hd] {
			p.vt[i*p.kvLen+j] = x
		}
	}
}

// attnSoftTask turns score rows into probabilities in place: scale, mask
// keys past the query's position (causal), max-subtracted softmax; masked
// entries become zero so the P·V product ignores them.
type attnSoftTask struct {
	s          []float32
	lds, kvLen int
	pos0       int
	window     int
	causal     bool
	scale      float32
}

func (k *attnSoftTask) Do(_, lo, hi int) {
	for t := lo; t < hi; t++ {
		row := k.s[t*k.lds : t*k.lds+k.kvLen]
		nvis := k.kvLen
		if k.causal {
			nvis = min(nvis, k.pos0+t+1)
		}
		first := windowStart(k.pos0+t, k.window, nvis)
		softmaxScaled(row[first:nvis], k.scale)
		clear(row[:first])
		clear(row[nvis:])
	}
}

// softmaxScaled replaces s by softmax(scale·s); an empty row stays empty.
// amd64 replaces it with softmaxScaledFast.
var softmaxScaled = softmaxScaledGeneric

func softmaxScaledGeneric(s []float32, scale float32) {
	if len(s) == 0 {
		return
	}
	mx := maxScaled(s, scale)
	sum := expScaled(s, scale, mx)
	inv := float32(1 / sum)
	for j := range s {
		s[j] *= inv
	}
}

// expScaled sets s[j] = exp(s[j]·scale − sub) and returns their sum; amd64
// replaces it with an AVX2 version of the same polynomial.
var expScaled = expScaledGeneric

func expScaledGeneric(s []float32, scale, sub float32) float64 {
	var sum float64
	for j, v := range s {
		e := exp32(v*scale - sub)
		s[j] = e
		sum += float64(e)
	}
	return sum
}

func floatBytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), 4*len(f))
}

// attnScoreFloats bounds the score block (1 MiB, a core's share of L2 on
// common CPUs); longer inputs are processed in blocks of query rows. The
// block is written by the scores product, read three times by the softmax
// and once by the values product: kept in cache, the Whisper encoder's
// 1500×1500 scores cost 11% less CPU per pass than as one 9-MB block. A
// variable so tests can force blocks.
var attnScoreFloats = 1 << 18

// useAttnGEMM reports whether the checked dispatch a takes the product
// path: many rows of one sequence, keys not overlapping (ps >= hd, which
// also bounds the packed copies by the cache size).
func useAttnGEMM(a *attnTask) bool {
	return a.m >= gemmAttnMinM && !a.perSeq && a.kvLen > 0 && a.ps >= a.hd
}

// attentionGEMM runs the checked dispatch a with the product path.
func (e *Exec) attentionGEMM(a *attnTask, nKV int) error {
	if e.useAttnBlocks(a) {
		return e.attentionBlocks(a, nKV)
	}
	hd, kv, m := a.hd, a.kvLen, a.m
	mb := m
	if a.probs == nil {
		mb = min(m, attnRowBlock(kv, a.causal && e.chunkRows > 0))
	}
	need := 2 * kv * hd
	if a.probs == nil {
		need += mb * kv
	}
	buf := e.ensureAttn(need)
	kp, vt, sbuf := buf[:kv*hd], buf[kv*hd:2*kv*hd], buf[2*kv*hd:]
	pk := &e.packT
	st := &e.attnSoftT
	defer func() { *pk, *st = attnPackTask{}, attnSoftTask{} }()
	for g := 0; g < nKV; g++ {
		*pk = attnPackTask{k: a.k, v: a.v, base: g * a.hs, ps: a.ps, hd: hd, kvLen: kv, written: a.written, kp: kp, vt: vt}
		e.pool.Run(kv, chunkGrain(2*hd), pk)
		for h := g * a.group; h < (g+1)*a.group; h++ {
			for t0 := 0; t0 < m; t0 += mb {
				rows := min(mb, m-t0)
				s, ld := sbuf, kv
				if a.probs != nil {
					s, ld = a.probs[(h*m+t0)*a.ldp:], a.ldp
				}
				if err := e.mm.Mul(ggml.F32, floatBytes(kp), kv, hd, rows, a.q[t0*a.ldq+h*hd:], a.ldq, s, ld, nil, nil, 0); err != nil {
					return e.errf("scores: %v", err)
				}
				*st = attnSoftTask{s: s, lds: ld, kvLen: kv, pos0: a.pos0 + t0, window: a.window, causal: a.causal, scale: a.scale}
				e.pool.Run(rows, chunkGrain(kv), st)
				if err := e.mm.Mul(ggml.F32, floatBytes(vt), hd, kv, rows, s, ld, a.out[t0*a.ldo+h*hd:], a.ldo, nil, nil, 0); err != nil {
					return e.errf("values: %v", err)
				}
			}
		}
	}
	return nil
}

func (e *Exec) ensureAttn(n int) []float32 {
	if n > len(e.attnScr) {
		e.attn.grow(4 * n)
		e.attnScr = e.attn.floats(n)
	}
	return e.attnScr[:n]
}

// attnGEMMNeeds is the product path's scratch for a dispatch's static
// shape (0 when it takes the direct path); kvCap is the keys its cache
// holds. Dispatches may take the blocked path instead, so theirs is the
// larger of the two.
func attnGEMMNeeds(d *plan.Dispatch, kvCap, workers int, chunked bool) int {
	a := plan.DecodeAttention(d)
	m, hd := a.M, a.HeadDim
	if m < gemmAttnMinM || a.Flags&plan.FlagPerSeqRows != 0 || a.PosStride < hd || kvCap == 0 {
		return 0
	}
	n := satAdd(satMul(2*kvCap, hd), satMul(min(m, attnRowBlock(kvCap, chunked && a.Flags&plan.FlagCausal != 0)), kvCap))
	// non-causal f32 products read the cache in place (attnInPlace)
	inPlace := a.Flags&plan.FlagCausal == 0 && a.Type == ggml.F32
	return max(n, attnBlocksNeeds(kvCap, hd, a.NKV, workers, inPlace))
}

// attnRowBlock is the query rows of one score block over kv keys. Where
// steps run in chunks (Options.ChunkRows), causal attention (an LLM's
// prefill) takes a power of two up to causalBlock, so that the blocks of
// a chunk (chunks start at multiples of causalBlock) are the whole
// step's blocks and its products have the same shapes: a BLAS's
// rounding may depend on them. Otherwise (blocked) up to attnScoreFloats
// scores.
func attnRowBlock(kv int, blocked bool) int {
	n := max(1, attnScoreFloats/max(kv, 1))
	if !blocked {
		return n
	}
	b := 1
	for b*2 <= min(n, causalBlock) {
		b *= 2
	}
	return b
}

// causalBlock bounds attnRowBlock for causal attention: it divides every
// chunk's rows (Options.ChunkRows).
const causalBlock = 64
