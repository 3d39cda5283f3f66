package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// TestRopeAttentionMatVec: RopeAttentionMatVec gives RopeAttention followed
// by the output MatVec onto x bit for bit (x, the att row, both caches),
// with and without a bias, and its contract refuses more than one row.
func TestRopeAttentionMatVec(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 11))
	hd, nHead, nKV := 32, 6, 2
	n := nHead * hd
	w := (nHead + 2*nKV) * hd
	lay := cacheLayout{seqs: 1, heads: nKV, ctx: 40, hd: hd}
	hs, ps, _ := lay.strides()
	const pos = 29
	qkv := randVec(r, w, 1)
	freqs := ropeFreqs(hd/4, 10000)
	cache := randVec(r, lay.size(), 1)
	h16 := make([]uint16, len(cache))
	for i, v := range cache {
		h16[i] = ggml.FP32ToFP16(v)
	}
	cacheBytes := u16Bytes(h16)
	x := randVec(r, n, 1)
	bias := randVec(r, n, 0.1)
	for _, typ := range []ggml.Type{ggml.F32, ggml.F16, ggml.Q8_0, ggml.Q4_0} {
		wo, _ := weightsOf(t, r, typ, n, n)
		for _, biased := range []bool{false, true} {
			run := func(fused bool) (xo, att, k, v []byte) {
				h := newHarness(t)
				qb, fb := h.f32("qkv", qkv), h.f32("freqs", freqs)
				kb, vb := h.buf("k", append([]byte(nil), cacheBytes...)), h.buf("v", append([]byte(nil), cacheBytes...))
				ab, xb, wb := h.nan("att", n), h.f32("x", x), h.weights("wo", wo)
				bb := plan.NoBuf
				if biased {
					bb = h.f32("bias", bias)
				}
				a := plan.RopeAttentionMatVecArgs{Type: typ, Q: bind(qb), K: bind(kb), V: bind(vb), Att: bind(ab),
					Freqs: bind(fb), W: bind(wb), Out: bind(xb), Bias: bind(bb), HeadDim: hd, NHead: nHead, NKV: nKV, M: 1,
					Ldq: w, Ldo: n, KVLen: pos + 1, Pos0: pos, Flags: plan.FlagCausal, Scale: 0.17, HeadStride: hs,
					PosStride: ps, Window: 0, Mode: plan.RopeNeoX, RopeDim: hd / 2}
				if fused {
					h.add(a.Dispatch())
				} else {
					h.add(a.RopeAttention().Dispatch())
					h.add(a.MatVec().Dispatch())
				}
				h.run(plan.Vars{})
				return h.read(xb), h.read(ab), h.read(kb), h.read(vb)
			}
			xo, att, k, v := run(true)
			wantX, wantAtt, wantK, wantV := run(false)
			require.Equal(t, wantX, xo, "%s bias %v: x", typ, biased)
			require.Equal(t, wantAtt, att, "att")
			require.Equal(t, wantK, k, "K cache")
			require.Equal(t, wantV, v, "V cache")
			require.NotEqual(t, ggml.F32Bytes(x), xo, "x was added to")
		}
	}
	bad := plan.RopeAttentionMatVecArgs{Type: ggml.Q8_0, HeadDim: 64, NHead: 4, NKV: 2, M: 2, Ldq: 512, Ldo: 256, KVLen: 9,
		Pos0: 8, Flags: plan.FlagPerSeqRows}
	require.ErrorContains(t, bad.Check(), "one row")
}
