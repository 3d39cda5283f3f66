package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// TestRopeAttention: RopeAttention gives RopeKV followed by Attention bit
// for bit (its output, both caches), leaves the qkv rows as they were, and
// its contract refuses rows of one sequence after the first.
func TestRopeAttention(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 7))
	hd, nHead, nKV := 64, 6, 2
	w := (nHead + 2*nKV) * hd
	lay := cacheLayout{seqs: 3, heads: nKV, ctx: 40, hd: hd}
	hs, ps, ss := lay.strides()
	const pos = 29
	for _, typ := range []ggml.Type{ggml.F32, ggml.F16} {
		for _, perSeq := range []bool{false, true} {
			for _, mode := range []plan.RopeMode{plan.RopeNormal, plan.RopeNeoX} {
				for _, window := range []int{0, 7} {
					m, flags := 1, uint32(plan.FlagCausal)
					if perSeq {
						m, flags = 3, flags|plan.FlagPerSeqRows
					}
					ldq := w + 5
					qkv := randVec(r, (m-1)*ldq+w, 1)
					freqs := ropeFreqs(hd/4, 10000)
					cache := randVec(r, lay.size(), 1) // the positions before pos
					cacheBytes := ggml.F32Bytes(cache)
					if typ == ggml.F16 {
						h := make([]uint16, len(cache))
						for i, v := range cache {
							h[i] = ggml.FP32ToFP16(v)
						}
						cacheBytes = u16Bytes(h)
					}
					run := func(fused bool) (out, k, v, rows []byte) {
						h := newHarness(t)
						qb, fb := h.f32("qkv", qkv), h.f32("freqs", freqs)
						kb, vb := h.buf("k", append([]byte(nil), cacheBytes...)), h.buf("v", append([]byte(nil), cacheBytes...))
						ob := h.nan("out", m*nHead*hd)
						att := plan.AttentionArgs{Type: typ, Q: bind(qb), K: bind(kb), V: bind(vb), Out: bind(ob), Probs: plan.None,
							HeadDim: hd, NHead: nHead, NKV: nKV, M: m, Ldq: ldq, Ldo: nHead * hd, KVLen: pos + 1, Pos0: pos,
							Flags: flags, Scale: 0.125, HeadStride: hs, PosStride: ps, SeqStride: ss, Window: window}
						if fused {
							h.add(plan.RopeAttentionArgs{Type: typ, Q: bind(qb), K: bind(kb), V: bind(vb), Out: bind(ob), Freqs: bind(fb),
								HeadDim: hd, NHead: nHead, NKV: nKV, M: m, Ldq: ldq, Ldo: nHead * hd, KVLen: pos + 1, Pos0: pos,
								Flags: flags, Scale: 0.125, HeadStride: hs, PosStride: ps, SeqStride: ss, Window: window,
								Mode: mode, RopeDim: hd / 2}.Dispatch())
						} else {
							h.add(plan.RopeKVArgs{Type: typ, QKV: bind(qb), Freqs: bind(fb), KCache: bind(kb), VCache: bind(vb),
								HeadDim: hd, NHead: nHead, NKV: nKV, M: m, Ldqkv: ldq, Pos0: pos, Mode: mode, RopeDim: hd / 2,
								HeadStride: hs, PosStride: ps, SeqStride: ss, Flags: flags & plan.FlagPerSeqRows}.Dispatch())
							h.add(att.Dispatch())
						}
						h.run(plan.Vars{})
						return h.read(ob), h.read(kb), h.read(vb), h.read(qb)
					}
					out, k, v, rows := run(true)
					wantOut, wantK, wantV, _ := run(false)
					require.Equal(t, wantOut, out, "%s perSeq %v mode %d window %d: output", typ, perSeq, mode, window)
					require.Equal(t, wantK, k, "K cache")
					require.Equal(t, wantV, v, "V cache")
					require.Equal(t, ggml.F32Bytes(qkv), rows, "the qkv rows are only read")
					require.NotEqual(t, cacheBytes, k, "the new key was stored")
				}
			}
		}
	}

	bad := plan.RopeAttentionArgs{Type: ggml.F16, HeadDim: 64, NHead: 4, NKV: 2, M: 2, Ldq: 512, Ldo: 256, KVLen: 9, Pos0: 8}
	require.ErrorContains(t, bad.Check(), "rows of one sequence")
	bad.Flags = plan.FlagPerSeqRows
	require.NoError(t, bad.Check())
}
