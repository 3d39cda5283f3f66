package msltest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

type attnCase struct {
	hd, nHead, nKV, m, kvLen, pos0, flags int
	probs                                 bool
	ty                                    ggml.Type
	window                                int
	aligned                               bool // attnExactCase: K/V rows unpadded, on 16-byte boundaries
}

// runAttnCase builds q, K/V caches (padded head/pos/seq strides) and
// compares out and probs with the CPU. It returns the worst error and the
// launches' functions.
func runAttnCase(t *testing.T, r *rand.Rand, c attnCase) (float64, []string, []byte) {
	t.Helper()
	w := c.nHead * c.hd
	ldq, ldo := w+5, w+3
	seqs := 1
	if c.flags&plan.FlagPerSeqRows != 0 {
		seqs = c.m
	}
	ps := c.hd + 2
	hs := (c.kvLen+1)*ps + 1
	ss := c.nKV*hs + 3
	cells := max(1, seqs*ss)
	kv := func() []byte {
		v := kitRand(r, cells, 1)
		if c.ty == ggml.F16 {
			return kitF16(v)
		}
		return kitF32(v)
	}
	q := kitRand(r, (c.m-1)*ldq+w, 1)
	ldp := c.kvLen + 2
	var probs []byte
	if c.probs {
		probs = kitF32(kitNaNs(c.nHead*c.m*ldp + 1))
	}
	scale := float32(1 / math.Sqrt(float64(c.hd)))
	d := plan.AttentionArgs{Type: c.ty, HeadDim: int(c.hd), NHead: int(c.nHead), NKV: int(c.nKV), M: int(c.m), Ldq: int(ldq), Ldo: int(ldo), KVLen: int(c.kvLen), Pos0: int(c.pos0), Flags: uint32(c.flags), Scale: scale, HeadStride: int(hs), PosStride: int(ps), SeqStride: int(ss), Ldp: int(ldp), Window: c.window}.Dispatch()
	ref, got := kitRun(t, d, [][]byte{kitF32(q), kv(), kv(), kitF32(kitNaNs((c.m-1)*ldo + w + 2)), probs})
	worst := kitCompare(t, ggml.BytesF32(ref[3]), ggml.BytesF32(got[3]), 2e-5, "attention out")
	if c.probs {
		worst = max(worst, kitCompare(t, ggml.BytesF32(ref[4]), ggml.BytesF32(got[4]), 2e-5, "attention probs"))
	}
	for i := range d.Bind[:5] {
		d.Bind[i].Buf = plan.BufID(i)
	}
	if !c.probs { // as kitRun bound it
		d.Bind[4].Buf = plan.NoBuf
	}
	tune := &shaders.Default
	if kitTune != nil {
		tune = kitTune
	}
	ls, err := shaders.LaunchFor(&d, tune, nil)
	if err != nil {
		t.Fatal(err)
	}
	var fns []string
	for _, l := range ls {
		fns = append(fns, l.Function)
	}
	return worst, fns, got[3]
}

// Attention: decode (split over the KV length and merged), prefill and
// encoder shapes (one chunk, several query rows per threadgroup), head
// sizes 64 and 80, GQA ratios, kvLen not a multiple of 32 or of the chunk,
// causal and not (with pos0 so some rows see few keys), per-sequence rows
// (beams), probs on and off, f16 and f32 K/V.
func TestAttentionKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	worst := 0.0
	split := 0
	used := map[string]bool{}
	causal, beams := plan.FlagCausal, plan.FlagPerSeqRows
	for _, ty := range []ggml.Type{ggml.F32, ggml.F16} {
		for _, c := range []attnCase{
			{hd: 64, nHead: 4, nKV: 2, m: 1, kvLen: 700, pos0: 699, flags: causal},          // decode, 3 chunks
			{hd: 80, nHead: 6, nKV: 6, m: 1, kvLen: 1, pos0: 0, flags: causal},              // first token
			{hd: 64, nHead: 8, nKV: 1, m: 1, kvLen: 513, pos0: 0, probs: true},              // split with probs
			{hd: 64, nHead: 2, nKV: 2, m: 3, kvLen: 300, pos0: 290, flags: causal | beams},  // beams
			{hd: 80, nHead: 4, nKV: 2, m: 37, kvLen: 50, pos0: 13, flags: causal},           // prefill chunk
			{hd: 64, nHead: 4, nKV: 4, m: 19, kvLen: 45, pos0: 0, probs: true},              // cross-attention
			{hd: 64, nHead: 6, nKV: 6, m: 1, kvLen: 1500, pos0: 0},                          // Whisper decode's cross-attention
			{hd: 64, nHead: 3, nKV: 3, m: 70, kvLen: 70, pos0: 0},                           // encoder
			{hd: 64, nHead: 2, nKV: 1, m: 5, kvLen: 0, pos0: 0, probs: true},                // nothing visible
			{hd: 32, nHead: 2, nKV: 2, m: 3, kvLen: 6, pos0: 0, flags: causal, probs: true}, // masked probs
			{hd: 20, nHead: 1, nKV: 1, m: 2, kvLen: 33, pos0: 4, flags: causal},             // head < 32 lanes
			// sliding windows (Gemma's local layers): decode split over
			// chunks some of which are wholly before the window, prefill
			// (tiled: 80-dim heads, mma: 64-dim) with windows not a
			// multiple of 32, beams, probs
			{hd: 64, nHead: 4, nKV: 2, m: 1, kvLen: 700, pos0: 699, flags: causal, window: 37},
			{hd: 80, nHead: 4, nKV: 2, m: 37, kvLen: 90, pos0: 53, flags: causal, window: 40},
			{hd: 64, nHead: 2, nKV: 1, m: 40, kvLen: 80, pos0: 40, flags: causal, probs: true, window: 45},
			{hd: 64, nHead: 2, nKV: 2, m: 3, kvLen: 300, pos0: 290, flags: causal | beams, window: 5},
			{hd: 32, nHead: 2, nKV: 2, m: 9, kvLen: 9, pos0: 0, flags: causal, probs: true, window: 3},
		} {
			c.ty = ty
			e, fns, _ := runAttnCase(t, r, c)
			worst = max(worst, e)
			if len(fns) > 1 {
				split++
			}
			for _, f := range fns {
				used[f] = true
			}
		}
	}
	// q, K, V, out and probs bound at odd element offsets into their
	// buffers (packed loads must not need more than element alignment)
	kitOffsets = map[int]uint64{0: 4, 1: 2, 2: 6, 3: 12, 4: 4}
	for _, c := range []attnCase{
		{hd: 64, nHead: 4, nKV: 2, m: 1, kvLen: 300, pos0: 299, flags: causal, probs: true, ty: ggml.F16},
		{hd: 64, nHead: 2, nKV: 1, m: 9, kvLen: 40, pos0: 31, flags: causal, ty: ggml.F16},
		{hd: 80, nHead: 2, nKV: 2, m: 9, kvLen: 40, pos0: 0, probs: true, ty: ggml.F32},
	} {
		if c.ty == ggml.F32 {
			kitOffsets[1], kitOffsets[2] = 4, 12
		}
		e, _, _ := runAttnCase(t, r, c)
		worst = max(worst, e)
	}
	kitOffsets = nil
	if kitTune == nil {
		for _, f := range []string{"attention_f32", "attention_f16", "attention_tiled_f32", "attention_tiled_f16",
			"attention_mma_f32", "attention_mma_f16", "attention_merge"} {
			require.True(t, used[f], "no case ran %s", f)
		}
	}
	t.Logf("attention: worst relative error %.3g (%d split cases)", worst, split)
}

// BenchmarkAttentionEncoderMSL is one Whisper-tiny encoder self-attention
// (1500 rows and keys, 6 heads of 64) through the executor: what an
// end-to-end transcription on the executor pays per layer.
func BenchmarkAttentionEncoderMSL(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	const hd, nh, n = 64, 6, 1500
	w := hd * nh
	qkv := kitF32(kitRand(r, n*w, 1))
	d := plan.AttentionArgs{Type: ggml.F32, Probs: plan.None, HeadDim: int(hd), NHead: int(nh), NKV: int(nh), M: int(n), Ldq: int(w), Ldo: int(w), KVLen: int(n), Scale: 0.125, HeadStride: int(hd), PosStride: int(w)}.Dispatch()
	init := [][]byte{qkv, qkv, qkv, kitF32(make([]float32, n*w))}
	be := TestBackend(b)
	b.ResetTimer()
	for range b.N {
		kitRunOn(b, be, d, init, nil)
	}
}
