package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/blas"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

type kvAt func(seq, head, pos, i int) float64

// refAttention is the contract in float64: out is m×(nHead·hd) dense, probs
// is [nHead][m][kvLen] with masked keys zero.
func refAttention(q []float32, ldq, m, nHead, nKV, hd int, K, V kvAt, kvLen, pos0, window int, causal, perSeq bool, scale float64) (out, probs []float64) {
	out = make([]float64, m*nHead*hd)
	probs = make([]float64, nHead*m*kvLen)
	for t := 0; t < m; t++ {
		seq, qpos := 0, pos0+t
		if perSeq {
			seq, qpos = t, pos0
		}
		for h := 0; h < nHead; h++ {
			kvh := h / (nHead / nKV)
			nvis := kvLen
			if causal {
				nvis = min(kvLen, qpos+1)
			}
			first := 0
			if window > 0 {
				first = min(max(0, qpos-window+1), nvis)
			}
			s := make([]float64, nvis)
			mx := math.Inf(-1)
			for j := first; j < nvis; j++ {
				for i := 0; i < hd; i++ {
					s[j] += float64(q[t*ldq+h*hd+i]) * K(seq, kvh, j, i)
				}
				s[j] *= scale
				mx = math.Max(mx, s[j])
			}
			var sum float64
			for j := first; j < nvis; j++ {
				s[j] = math.Exp(s[j] - mx)
				sum += s[j]
			}
			for j := first; j < nvis; j++ {
				p := s[j] / sum
				probs[(h*m+t)*kvLen+j] = p
				for i := 0; i < hd; i++ {
					out[(t*nHead+h)*hd+i] += p * V(seq, kvh, j, i)
				}
			}
		}
	}
	return out, probs
}

type attnCase struct {
	name                  string
	typ                   ggml.Type
	hd, nHead, nKV, m     int
	kvLen, pos0           int
	causal, perSeq, probs bool
	proj                  bool // K/V as projection rows [pos][nKV·hd] instead of a cache
	scoreBlock            int  // forces the product path to split query rows
	window                int  // sliding window (0 = none)
}

func TestAttention(t *testing.T) {
	cases := []attnCase{
		{"prefill_gqa_f32", ggml.F32, 64, 6, 2, 7, 7, 0, true, false, false, false, 0, 0},
		{"chunk_f16", ggml.F16, 64, 4, 4, 4, 9, 5, true, false, false, false, 0, 0},
		{"decode_f16", ggml.F16, 64, 9, 3, 1, 13, 12, true, false, false, false, 0, 0},
		{"cross_probs", ggml.F32, 64, 6, 6, 5, 1500, 0, false, false, true, false, 0, 0},
		{"cross_probs_causal", ggml.F16, 32, 2, 1, 6, 11, 3, true, false, true, false, 0, 0},
		{"beams_f16", ggml.F16, 64, 4, 2, 3, 10, 9, true, true, false, false, 0, 0},
		{"beams_probs", ggml.F32, 48, 2, 2, 3, 10, 9, true, true, true, false, 0, 0},
		// from 16 rows the product path runs
		{"encoder_self_proj", ggml.F32, 64, 6, 6, 67, 67, 0, false, false, false, true, 0, 0},
		{"prefill_causal_gqa_f16", ggml.F16, 64, 6, 2, 40, 45, 5, true, false, false, false, 0, 0},
		{"prefill_blocks", ggml.F32, 32, 4, 2, 33, 33, 0, true, false, false, true, 7 * 33, 0},
		{"cross_probs_gemm", ggml.F32, 64, 6, 6, 20, 1500, 0, false, false, true, true, 0, 0},
		{"causal_probs_gemm", ggml.F16, 32, 2, 1, 17, 21, 4, true, false, true, false, 0, 0},
		{"beams_many", ggml.F16, 32, 2, 2, 17, 5, 4, true, true, false, false, 0, 0},
		// sliding windows (Gemma's local layers)
		{"window_decode", ggml.F16, 64, 4, 2, 1, 13, 12, true, false, false, false, 0, 4},
		{"window_prefill", ggml.F32, 32, 4, 1, 9, 12, 3, true, false, true, false, 0, 3},
		{"window_gemm", ggml.F16, 32, 4, 2, 40, 45, 5, true, false, true, false, 0, 5},
		{"window_blocks", ggml.F32, 32, 2, 2, 33, 33, 0, true, false, false, true, 5 * 33, 7},
		{"window_beams", ggml.F32, 32, 2, 2, 3, 10, 9, true, true, true, false, 0, 2},
		// more than one block of attnBlockRows, a partial last one
		{"prefill_long_f16", ggml.F16, 48, 6, 3, 101, 104, 3, true, false, false, false, 0, 0},
		{"prefill_long_window", ggml.F16, 64, 2, 1, 77, 77, 0, true, false, true, false, 0, 19},
	}
	// causal product-path dispatches take the blocked path (attentionBlocks)
	// where sgemm can run on every worker: each case runs with it off, on,
	// and on with odd blocks of 7 query rows
	blocked := blas.Available() && blas.Threads() != 0
	if !blocked {
		t.Log("no sgemm that runs one thread per call: the blocked attention path is not tested here")
	}
	for ci, c := range cases {
		for _, rows := range []int{0, 64, 7} {
			if rows > 0 && !blocked {
				continue
			}
			t.Run(fmt.Sprintf("%s/blocks%d", c.name, rows), func(t *testing.T) {
				oldOn, oldRows := attnBlocksOn, attnBlockRows
				attnBlocksOn, attnBlockRows = rows > 0, max(rows, 1)
				defer func() { attnBlocksOn, attnBlockRows = oldOn, oldRows }()
				testAttentionCase(t, ci, c)
			})
		}
	}
}

func testAttentionCase(t *testing.T, ci int, c attnCase) {
	r := rand.New(rand.NewPCG(uint64(ci), 25))
	seqs := 1
	if c.perSeq {
		seqs = c.m
	}
	if c.scoreBlock > 0 {
		old := attnScoreFloats
		attnScoreFloats = c.scoreBlock
		defer func() { attnScoreFloats = old }()
	}
	lay := cacheLayout{seqs: seqs, heads: c.nKV, ctx: c.kvLen + 2, hd: c.hd}
	hs, ps, ss := lay.strides()
	at := func(v []float32) kvAt {
		return func(s, hh, p, i int) float64 { return float64(v[lay.at(s, hh, p, i)]) }
	}
	if c.proj {
		ld := c.nKV*c.hd + 3
		hs, ps, ss = c.hd, ld, 0
		at = func(v []float32) kvAt {
			return func(_, hh, p, i int) float64 { return float64(v[p*ld+hh*c.hd+i]) }
		}
	}
	ldq, ldo := c.nHead*c.hd+3, c.nHead*c.hd+5
	q := randVec(r, (c.m-1)*ldq+c.nHead*c.hd, 1)
	size := lay.size()
	if c.proj {
		size = c.kvLen * ps
	}
	kv := [2][]float32{randVec(r, size, 1), randVec(r, size, 1)}
	h := newHarness(t)
	qb := h.f32("q", q)
	var kvb [2]plan.BufID
	for i := range kvb {
		if c.typ == ggml.F16 {
			kv[i] = roundF16(kv[i])
			kvb[i] = h.buf("kv", f16Bytes(kv[i]))
		} else {
			kvb[i] = h.f32("kv", kv[i])
		}
	}
	ob := h.nan("out", (c.m-1)*ldo+c.nHead*c.hd+7)
	ldp := c.kvLen + 3
	pb := plan.NoBuf
	if c.probs {
		pb = h.nan("probs", (c.nHead*c.m-1)*ldp+c.kvLen+2)
	}
	flags := uint32(0)
	if c.causal {
		flags |= plan.FlagCausal
	}
	if c.perSeq {
		flags |= plan.FlagPerSeqRows
	}
	scale := 1 / math.Sqrt(float64(c.hd))
	h.add(plan.AttentionArgs{Type: c.typ, Q: bind(qb), K: bind(kvb[0]), V: bind(kvb[1]), Out: bind(ob), Probs: bind(pb), HeadDim: int(c.hd), NHead: int(c.nHead), NKV: int(c.nKV), M: int(c.m), Ldq: int(ldq), Ldo: int(ldo), KVLen: int(c.kvLen), Pos0: int(c.pos0), Flags: uint32(flags), Scale: float32(scale), HeadStride: int(hs), PosStride: int(ps), SeqStride: int(ss), Ldp: int(ldp), Window: c.window}.Dispatch())
	h.run(plan.Vars{})
	want, wantP := refAttention(q, ldq, c.m, c.nHead, c.nKV, c.hd, at(kv[0]), at(kv[1]), c.kvLen, c.pos0, c.window, c.causal, c.perSeq, float64(float32(scale)))
	checkOut(t, h.readF32(ob), want, c.m, ldo, c.nHead*c.hd, 2e-5, "attention out")
	if c.probs {
		checkOut(t, h.readF32(pb), wantP, c.nHead*c.m, ldp, c.kvLen, 2e-5, "attention probs")
	}
}

// TestDecodeMatchesPrefill fills a KV cache one token at a time through
// patched RopeKV and Attention dispatches and checks each step's output
// against one causal prefill over the same tokens (which, at 20 rows, takes
// the product path while decode takes the direct one).
func TestDecodeMatchesPrefill(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 27))
	const hd, nHead, nKV, T = 64, 6, 2, 20
	const w = (nHead + 2*nKV) * hd
	lay := cacheLayout{seqs: 1, heads: nKV, ctx: 24, hd: hd}
	hs, ps, ss := lay.strides()
	qkv := randVec(r, T*w, 1)
	freqs := ropeFreqs(hd/2, 10000)
	scale := plan.F32(float32(1 / math.Sqrt(hd)))

	h := newHarness(t)
	fb := h.f32("freqs", freqs)
	qP, qD := h.f32("qkvP", qkv), h.f32("qkvD", qkv)
	kvBytes := int64(2 * lay.size())
	cache := func(name string) plan.BufID {
		return h.p.AddBuffer(plan.Buffer{Name: name, Kind: plan.State, Size: kvBytes})
	}
	kP, vP, kD, vD := cache("kP"), cache("vP"), cache("kD"), cache("vD")
	oP, oD := h.nan("outP", T*nHead*hd), h.nan("outD", T*nHead*hd)

	// pass 0: prefill of all T tokens
	h.add(plan.RopeKVArgs{Type: ggml.F16, QKV: bind(qP), Freqs: bind(fb), KCache: bind(kP), VCache: bind(vP), HeadDim: int(hd), NHead: int(nHead), NKV: int(nKV), M: int(T), Ldqkv: int(w), Mode: plan.RopeNeoX, RopeDim: int(hd), HeadStride: int(hs), PosStride: int(ps), SeqStride: int(ss)}.Dispatch())
	h.add(plan.AttentionArgs{Type: ggml.F16, Q: bind(qP), K: bind(kP), V: bind(vP), Out: bind(oP), Probs: plan.None, HeadDim: int(hd), NHead: int(nHead), NKV: int(nKV), M: int(T), Ldq: int(w), Ldo: int(nHead * hd), KVLen: int(T), Flags: plan.FlagCausal, Scale: math.Float32frombits(scale), HeadStride: int(hs), PosStride: int(ps), SeqStride: int(ss)}.Dispatch())
	// pass 1: one decode step at position VarPos
	dec, _ := h.p.AddPass("decode")
	rk := plan.RopeKVArgs{Type: ggml.F16, QKV: bind(qD), Freqs: bind(fb), KCache: bind(kD), VCache: bind(vD), HeadDim: int(hd), NHead: int(nHead), NKV: int(nKV), M: 1, Ldqkv: int(w), Mode: plan.RopeNeoX, RopeDim: int(hd), HeadStride: int(hs), PosStride: int(ps), SeqStride: int(ss)}.Dispatch()
	rk.NPatch = 2
	rk.Patch[0] = plan.Patch{Target: plan.PatchRopeKVPos0, Var: plan.VarPos, Mul: 1}
	rk.Patch[1] = plan.Patch{Target: plan.PatchRopeKVQKVOff, Var: plan.VarPos, Mul: 4 * w}
	dec.Add(rk)
	at := plan.AttentionArgs{Type: ggml.F16, Q: bind(qD), K: bind(kD), V: bind(vD), Out: bind(oD), Probs: plan.None, HeadDim: int(hd), NHead: int(nHead), NKV: int(nKV), M: 1, Ldq: int(w), Ldo: int(nHead * hd), Flags: plan.FlagCausal, Scale: math.Float32frombits(scale), HeadStride: int(hs), PosStride: int(ps), SeqStride: int(ss)}.Dispatch()
	at.NPatch = 4
	at.Patch[0] = plan.Patch{Target: plan.PatchAttentionKVLen, Var: plan.VarKVLen, Mul: 1}
	at.Patch[1] = plan.Patch{Target: plan.PatchAttentionPos0, Var: plan.VarPos, Mul: 1}
	at.Patch[2] = plan.Patch{Target: plan.PatchAttentionQOff, Var: plan.VarPos, Mul: 4 * w}
	at.Patch[3] = plan.Patch{Target: plan.PatchAttentionOutOff, Var: plan.VarPos, Mul: 4 * nHead * hd}
	dec.Add(at)

	ex := h.load()
	require.NoError(t, ex.Run(0, nil))
	// the first steps one by one, the rest chained
	for p := 0; p < 3; p++ {
		require.NoError(t, ex.Run(1, &plan.Vars{plan.VarPos: int64(p), plan.VarKVLen: int64(p + 1)}))
	}
	var steps []plan.Vars
	for p := 3; p < T; p++ {
		steps = append(steps, plan.Vars{plan.VarPos: int64(p), plan.VarKVLen: int64(p + 1)})
	}
	require.NoError(t, ex.RunSeq(1, steps))

	require.Equal(t, h.read(kP), h.read(kD), "K caches")
	require.Equal(t, h.read(vP), h.read(vD), "V caches")
	got, want := h.readF32(oD), h.readF32(oP)
	for i := range want {
		require.InDelta(t, want[i], got[i], 2e-5, "element %d", i)
	}
}

// attnKeyPath is a pair of single-query f32 key kernels.
type attnKeyPath struct {
	scores func(s, q, k []float32, ps int, scale float32)
	values func(o, p, v []float32, ps int)
}

// The attention kernels this CPU can run, by instruction set
// (kernels_amd64_test.go adds its own).
var (
	softmaxPaths   = map[string]func([]float32, float32){"generic": softmaxScaledGeneric}
	maxScaledPaths = map[string]func([]float32, float32) float32{"generic": maxScaled}
	attnKeyPaths   = map[string]attnKeyPath{"generic": {keyScoresF32Generic, addValuesF32Generic}}
)

// Each path of the product attention's row softmax (the portable loops,
// and the AVX2 maximum and scaling with their tails where the CPU has
// them) agrees with a float64 softmax at odd lengths.
func TestSoftmaxScaledPaths(t *testing.T) {
	paths := softmaxPaths
	r := rand.New(rand.NewPCG(23, 24))
	const scale = 0.125
	for name, soft := range paths {
		for _, n := range []int{1, 7, 8, 9, 15, 17, 64, 1500, 1501} {
			s := randVec(r, n, 40)
			if n > 9 {
				s[n/2] = 600 // the largest, mid-row
			}
			want := make([]float64, n)
			mx := math.Inf(-1)
			for _, v := range s {
				mx = max(mx, float64(v)*scale)
			}
			var sum float64
			for i, v := range s {
				want[i] = math.Exp(float64(v)*scale - mx)
				sum += want[i]
			}
			got := append([]float32(nil), s...)
			soft(got, scale)
			var gotSum float64
			for i := range got {
				want[i] /= sum
				require.InDelta(t, want[i], float64(got[i]), 1e-6*(1e-3+want[i]), "%s n=%d i=%d", name, n, i)
				gotSum += float64(got[i])
			}
			require.InDelta(t, 1, gotSum, 1e-5, "%s n=%d: sum", name, n)
		}
	}
}

// Each path of the softmax's maximum gives the largest scaled score by
// maxScaled's rule at odd lengths: NaNs after the first score are
// skipped, a NaN first score stays the maximum.
func TestMaxScaledPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	const scale = 0.125
	nan := float32(math.NaN())
	for name, mx := range maxScaledPaths {
		for _, n := range []int{1, 7, 8, 9, 16, 24, 1501} {
			for _, firstNaN := range []bool{false, true} {
				s := randVec(r, n, 5)
				for i := 3; i < n; i += 5 {
					s[i] = nan
				}
				if n > 2 {
					s[n-2] = 50 // in the scalar tail or the last group
				}
				if firstNaN {
					s[0] = nan
				}
				want := math.Inf(-1)
				for _, v := range s {
					if !math.IsNaN(float64(v)) {
						want = max(want, float64(v*scale))
					}
				}
				got := mx(s, scale)
				if firstNaN {
					require.True(t, math.IsNaN(float64(got)), "%s n=%d: got %v, want NaN", name, n, got)
				} else {
					require.Equal(t, want, float64(got), "%s n=%d", name, n)
				}
			}
		}
	}
}

// Each path of single-query attention's f32 key kernels (the portable
// per-key loops, and the AVX2 assembly on groups of keys with its
// fallbacks where the CPU has it) agrees with float64 at odd key counts,
// head dimensions and key strides, and writes nothing else.
func TestAttnKeyKernels(t *testing.T) {
	paths := attnKeyPaths
	r := rand.New(rand.NewPCG(25, 26))
	for name, p := range paths {
		for _, hd := range []int{8, 12, 24, 32, 40, 64, 96, 128} {
			for _, n := range []int{1, 3, 4, 5, 7, 13, 64, 1500, 1501} {
				ps := hd + 3
				k := randVec(r, (n-1)*ps+hd, 1)
				v := randVec(r, (n-1)*ps+hd, 1)
				checkKeyKernels(t, r, fmt.Sprintf("%s hd=%d n=%d", name, hd, n), hd, n,
					func(j, c int) float64 { return float64(k[j*ps+c]) }, func(j, c int) float64 { return float64(v[j*ps+c]) },
					func(s, q []float32, scale float32) { p.scores(s, q, k, ps, scale) }, func(o, pr []float32) { p.values(o, pr, v, ps) })
			}
		}
	}
}

// checkKeyKernels runs one path's scores and values (the kernels bound to
// their cache, element c of key or value j read as key(j, c) and val(j,
// c)) on n keys of hd and compares them with float64, and that nothing
// past the scores or the head is written.
func checkKeyKernels(t *testing.T, r *rand.Rand, what string, hd, n int, key, val func(j, c int) float64,
	scores func(s, q []float32, scale float32), values func(o, p []float32)) {
	t.Helper()
	const scale = 0.125
	q := randVec(r, hd, 1)
	pr := randVec(r, n, 0.1)
	s := make([]float32, n+1)
	s[n] = 777
	scores(s[:n], q, scale)
	o0 := randVec(r, hd, 1)
	o := append(append([]float32(nil), o0...), 777)
	values(o[:hd], pr)
	for j := range n {
		var want float64
		for c := range hd {
			want += float64(q[c]) * key(j, c)
		}
		want *= scale
		require.InDelta(t, want, float64(s[j]), 1e-5*(1+math.Abs(want)), "%s key %d", what, j)
	}
	for c := range hd {
		want := float64(o0[c])
		for j := range n {
			want += float64(pr[j]) * val(j, c)
		}
		require.InDelta(t, want, float64(o[c]), 1e-5*(1+math.Abs(want)), "%s out %d", what, c)
	}
	require.Equal(t, float32(777), s[n], "%s: score past the keys", what)
	require.Equal(t, float32(777), o[hd], "%s: output past the head", what)
}

// attnHalfPath is a pair of single-query f16 key kernels.
type attnHalfPath struct {
	scores func(s, q []float32, k []uint16, spans []kvSpan, ps int, scale float32)
	values func(o, p []float32, v []uint16, spans []kvSpan, ps int)
}

// The f16 key kernels this CPU can run (kernels_amd64_test.go adds the
// AVX2 ones).
var attnHalfPaths = map[string]attnHalfPath{"generic": {keyScoresF16Generic, addValuesF16Generic}}

// Each path of single-query attention's f16 key kernels agrees with
// float64 at odd key counts and head dimensions (the assembly's multiples
// of 8 and 32, the 64-wide and 32-wide value passes, and the portable
// fallbacks), with the keys in one span (a contiguous cache) or in spans
// of 0-7 keys laid out in reverse order (a paged cache's blocks: groups of
// 4 and single keys in each), and writes nothing else.
func TestAttnHalfKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	for name, p := range attnHalfPaths {
		for _, hd := range []int{6, 8, 12, 24, 32, 40, 64, 96, 128, 160} {
			for _, n := range []int{1, 3, 4, 5, 7, 13, 16, 64, 161} {
				for _, paged := range []bool{false, true} {
					ps := hd + 3
					spans := []kvSpan{{0, n}}
					if paged {
						spans = randomSpans(r, n, ps)
					}
					at := make([]int, 0, n) // key j's offset
					size := 0
					for _, sp := range spans {
						for i := range sp.n {
							at = append(at, sp.off+i*ps)
						}
						size = max(size, sp.off+sp.n*ps)
					}
					k := bytesU16(f16Bytes(randVec(r, size, 1)))
					v := bytesU16(f16Bytes(randVec(r, size, 1)))
					f16 := func(c []uint16) func(j, i int) float64 {
						return func(j, i int) float64 { return float64(ggml.FP16ToFP32(c[at[j]+i])) }
					}
					checkKeyKernels(t, r, fmt.Sprintf("%s hd=%d n=%d paged=%v", name, hd, n, paged), hd, n, f16(k), f16(v),
						func(s, q []float32, scale float32) { p.scores(s, q, k, spans, ps, scale) },
						func(o, pr []float32) { p.values(o, pr, v, spans, ps) })
				}
			}
		}
	}
}

// A key's score does not depend on how its keys are cut into spans:
// the batch engine's paged rows and sequential decode's contiguous cache
// must score the same keys to the bit (engine/batch's tests compare the
// two), so a key scored in a group of 4 and one scored alone (a span's
// last 1-3) sum their lanes in the same order.
func TestAttnHalfScoresSpanFree(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for name, p := range attnHalfPaths {
		for _, hd := range []int{8, 32, 64} {
			const n = 23
			ps := hd + 3
			k := bytesU16(f16Bytes(randVec(r, n*ps, 1)))
			q := randVec(r, hd, 1)
			whole := make([]float32, n)
			p.scores(whole, q, k, []kvSpan{{0, n}}, ps, 0.125)
			for trial := range 50 {
				var spans []kvSpan
				for j := 0; j < n; {
					c := min(1+r.IntN(7), n-j)
					spans = append(spans, kvSpan{j * ps, c})
					j += c
				}
				got := make([]float32, n)
				p.scores(got, q, k, spans, ps, 0.125)
				require.Equal(t, whole, got, "%s hd=%d trial %d spans %v", name, hd, trial, spans)
			}
		}
	}
}

// randomSpans splits n keys ps apart into spans of 0-7 keys, the last
// span first in memory and a key's gap between neighbours.
func randomSpans(r *rand.Rand, n, ps int) []kvSpan {
	var spans []kvSpan
	for left := n; left > 0; {
		c := min(r.IntN(8), left)
		spans = append(spans, kvSpan{n: c})
		left -= c
	}
	off := 0
	for i := len(spans) - 1; i >= 0; i-- {
		spans[i].off = off
		off += (spans[i].n + 1) * ps
	}
	return spans
}

// A decode step's 9 heads (SmolLM2) split 5:4 over 2 workers at every
// depth where the job is split at all, with chunks claimed greedily (each
// worker takes the next chunk when it finishes its last, all items
// costing the same), and a larger batch stays within a chunk of even.
func TestAttnGrainBalance(t *testing.T) {
	const hd = 64
	for _, c := range []struct{ n, workers int }{{9, 2}, {9, 3}, {18, 2}, {27, 2}, {72, 2}, {9 * 16, 4}} {
		for kv := 1; kv <= 4096; kv++ {
			g := attnGrain(c.n, c.workers, kv*2*hd)
			if g >= c.n {
				continue // one chunk: run inline
			}
			loads := make([]int, c.workers)
			for lo := 0; lo < c.n; lo += g {
				w := 0
				for i, l := range loads {
					if l < loads[w] {
						w = i
					}
				}
				loads[w] += min(g, c.n-lo)
			}
			even := (c.n + c.workers - 1) / c.workers
			most := slices.Max(loads)
			if c.n == 9 && c.workers == 2 {
				require.Equal(t, even, most, "n=%d workers=%d kv=%d grain %d: loads %v", c.n, c.workers, kv, g, loads)
			}
			require.LessOrEqual(t, most, even+g-1, "n=%d workers=%d kv=%d grain %d: loads %v", c.n, c.workers, kv, g, loads)
		}
	}
}
