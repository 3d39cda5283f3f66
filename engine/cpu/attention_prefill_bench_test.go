package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/blas"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// The causal prefill attention of SmolLM2-135M (9 heads over 3 KV heads of
// 64, f16 cache) over one 512-token chunk, as `hark bench llm --pp 512`
// runs it in each layer: the blocked path against the per-head product
// path (blocks0). One worker, so ns/op is the kernels' CPU time.
func BenchmarkAttentionPrefillSmol(b *testing.B) {
	const nHead, nKV, hd, m = 9, 3, 64, 512
	if blas.Threads() != 0 {
		blas.SetThreads(1) // as the pool's sgemm calls run it
	}
	for _, rows := range []int{0, 64, 128} {
		b.Run(fmt.Sprintf("blocks%d", rows), func(b *testing.B) {
			oldOn, oldRows := attnBlocksOn, attnBlockRows
			attnBlocksOn, attnBlockRows = rows > 0, max(rows, 1)
			defer func() { attnBlocksOn, attnBlockRows = oldOn, oldRows }()
			r := rand.New(rand.NewPCG(5, 6))
			h := benchHarness(b)
			q := h.f32("q", randVec(r, m*nHead*hd, 1))
			k, v := h.buf("k", f16Bytes(randVec(r, nKV*m*hd, 1))), h.buf("v", f16Bytes(randVec(r, nKV*m*hd, 1)))
			o := h.nan("o", m*nHead*hd)
			h.add(plan.AttentionArgs{Type: ggml.F16, Q: bind(q), K: bind(k), V: bind(v), Out: bind(o), Probs: plan.None,
				HeadDim: hd, NHead: nHead, NKV: nKV, M: m, Ldq: nHead * hd, Ldo: nHead * hd, KVLen: m,
				Flags: plan.FlagCausal, Scale: 0.125, HeadStride: m * hd, PosStride: hd}.Dispatch())
			benchOne(b, h, float64(4*m*m*hd*nHead))
		})
	}
}
