package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// The single-query decode attention of SmolLM2-135M (9 heads over 3 KV
// heads of 64, f16 cache) at the depths a 128-token chat reaches, through
// the contiguous cache `hark bench llm` decodes with and the paged one
// `hark serve` does (blocks of batch.DefaultBlockSize positions, scrambled
// in the pool). One worker, so ns/op is the kernel's CPU time.
func BenchmarkAttentionDecodeSmol(b *testing.B) {
	const nHead, nKV, hd, bs, ctx = 9, 3, 64, 16, 256
	for _, kvLen := range []int{64, 160} {
		b.Run(fmt.Sprintf("contiguous/kv%d", kvLen), func(b *testing.B) {
			r := rand.New(rand.NewPCG(3, uint64(kvLen)))
			h := benchHarness(b)
			q := h.f32("q", randVec(r, nHead*hd, 1))
			k, v := h.buf("k", f16Bytes(randVec(r, nKV*ctx*hd, 1))), h.buf("v", f16Bytes(randVec(r, nKV*ctx*hd, 1)))
			o := h.nan("o", nHead*hd)
			h.add(plan.AttentionArgs{Type: ggml.F16, Q: bind(q), K: bind(k), V: bind(v), Out: bind(o), Probs: plan.None,
				HeadDim: hd, NHead: nHead, NKV: nKV, M: 1, Ldq: nHead * hd, Ldo: nHead * hd, KVLen: kvLen, Pos0: kvLen - 1,
				Flags: plan.FlagCausal, Scale: 0.125, HeadStride: ctx * hd, PosStride: hd}.Dispatch())
			benchOne(b, h, float64(4*kvLen*hd*nHead))
		})
		b.Run(fmt.Sprintf("paged/kv%d", kvLen), func(b *testing.B) {
			r := rand.New(rand.NewPCG(4, uint64(kvLen)))
			nBlocks := ctx / bs
			bstride := nKV * bs * hd
			h := benchHarness(b)
			q := h.f32("q", randVec(r, nHead*hd, 1))
			k, v := h.buf("k", f16Bytes(randVec(r, nBlocks*bstride, 1))), h.buf("v", f16Bytes(randVec(r, nBlocks*bstride, 1)))
			table := make([]int32, nBlocks)
			for i, p := range r.Perm(nBlocks) {
				table[i] = int32(p)
			}
			pos, tb := h.i32("pos", []int32{int32(kvLen - 1)}), h.i32("table", table)
			o := h.nan("o", nHead*hd)
			h.add(plan.AttentionPagedArgs{Type: ggml.F16, Q: bind(q), K: bind(k), V: bind(v), Out: bind(o), Pos: bind(pos), Table: bind(tb),
				HeadDim: hd, NHead: nHead, NKV: nKV, M: 1, Ldq: nHead * hd, Ldo: nHead * hd, Scale: 0.125,
				HeadStride: bs * hd, PosStride: hd, BlockSize: bs, BlockStride: bstride, NBlocks: nBlocks, TableStride: nBlocks}.Dispatch())
			benchOne(b, h, float64(4*kvLen*hd*nHead))
		})
	}
}

// benchPool is a one-worker pool: a benchmark on it times one thread's
// work, with no helper to wake or wait for.
var benchPool = NewPool(1)

func benchHarness(b *testing.B) *harness {
	h := &harness{t: b, be: New(Options{Pool: benchPool}), init: map[plan.BufID][]byte{}}
	h.p.Name = b.Name()
	h.pass, _ = h.p.AddPass("main")
	return h
}
