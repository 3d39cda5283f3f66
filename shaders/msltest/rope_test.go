package msltest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// ropeFreqs are inverse frequencies base^(-2i/ropeDim), as model code makes.
func ropeFreqs(ropeDim int, base float64) []float32 {
	f := make([]float32, ropeDim/2)
	for i := range f {
		f[i] = float32(math.Pow(base, -2*float64(i)/float64(ropeDim)))
	}
	return f
}

// Rope: normal and NeoX, partial rotation, mscale, per-sequence rows,
// positions up to 40K (where the angle needs more than float32 digits).
func TestRopeKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	worst := 0.0
	for _, c := range []struct {
		hd, nHead, m, ldx, pos0 int
		mode                    plan.RopeMode
		ropeDim, flags          int
		ms                      float32
	}{
		{64, 4, 3, 256, 0, plan.RopeNormal, 0, 0, 0},
		{80, 3, 5, 250, 17, plan.RopeNeoX, 0, 0, 0},
		{128, 2, 2, 256, 40000, plan.RopeNeoX, 64, 0, 1.2},
		{64, 5, 4, 330, 1234, plan.RopeNormal, 32, plan.FlagPerSeqRows, 0},
		{2, 1, 1, 2, 7, plan.RopeNormal, 0, 0, 0},
	} {
		x := kitRand(r, (c.m-1)*c.ldx+c.nHead*c.hd, 1)
		rd := c.ropeDim
		if rd == 0 {
			rd = c.hd
		}
		d := plan.RopeArgs{HeadDim: int(c.hd), NHead: int(c.nHead), M: int(c.m), Ldx: int(c.ldx), Pos0: int(c.pos0), Mode: c.mode, RopeDim: int(c.ropeDim), Flags: uint32(c.flags), MScale: c.ms}.Dispatch()
		ref, got := kitRun(t, d, [][]byte{kitF32(x), kitF32(ropeFreqs(rd, 10000))})
		worst = max(worst, kitCompare(t, ggml.BytesF32(ref[0]), ggml.BytesF32(got[0]), 2e-6, "rope"))
	}
	t.Logf("rope: worst relative error %.3g", worst)
}

// RopeKV: Q and K rotated in the qkv rows, K and V stored into f32 and f16
// caches with head/pos/seq strides, GQA, per-sequence rows, no-rotation
// (freqs NoBuf). Cache cells the dispatch does not own keep their poison.
func TestRopeKVKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	worst := 0.0
	for _, c := range []struct {
		hd, nHead, nKV, m, pos0 int
		mode                    plan.RopeMode
		ropeDim, flags          int
		noFreqs                 bool
	}{
		{64, 4, 2, 3, 5, plan.RopeNormal, 0, 0, false},
		{80, 6, 2, 4, 30, plan.RopeNeoX, 0, 0, false},
		{64, 8, 8, 1, 999, plan.RopeNeoX, 32, 0, false},
		{64, 4, 1, 3, 11, plan.RopeNormal, 0, plan.FlagPerSeqRows, false},
		{80, 2, 2, 2, 3, plan.RopeNormal, 0, 0, true},
	} {
		for _, ty := range []ggml.Type{ggml.F32, ggml.F16} {
			w := (c.nHead + 2*c.nKV) * c.hd
			ld := w + 7
			qkv := kitRand(r, (c.m-1)*ld+w, 1)
			// cache: seqs × heads × positions, padded head/pos strides
			npos := c.pos0 + c.m + 2
			seqs := 1
			if c.flags&plan.FlagPerSeqRows != 0 {
				seqs = c.m
			}
			ps := c.hd + 3
			hs := npos * ps
			ss := c.nKV*hs + 5
			cells := seqs * ss
			var kc, vc []byte
			if ty == ggml.F32 {
				kc, vc = kitF32(kitNaNs(cells)), kitF32(kitNaNs(cells))
			} else {
				poison := make([]byte, 2*cells)
				for i := range poison {
					poison[i] = 0xff // f16 NaN
				}
				kc, vc = poison, append([]byte(nil), poison...)
			}
			rd := c.ropeDim
			if rd == 0 {
				rd = c.hd
			}
			var freqs []byte
			if !c.noFreqs {
				freqs = kitF32(ropeFreqs(rd, 500000))
			}
			d := plan.RopeKVArgs{Type: ty, HeadDim: int(c.hd), NHead: int(c.nHead), NKV: int(c.nKV), M: int(c.m), Ldqkv: int(ld), Pos0: int(c.pos0), Mode: c.mode, RopeDim: int(c.ropeDim), HeadStride: int(hs), PosStride: int(ps), SeqStride: int(ss), Flags: uint32(c.flags)}.Dispatch()
			ref, got := kitRun(t, d, [][]byte{kitF32(qkv), freqs, kc, vc})
			worst = max(worst, kitCompare(t, ggml.BytesF32(ref[0]), ggml.BytesF32(got[0]), 2e-6, "rope_kv qkv"))
			if ty == ggml.F32 {
				worst = max(worst, kitCompare(t, ggml.BytesF32(ref[2]), ggml.BytesF32(got[2]), 2e-6, "rope_kv k f32"))
				require.Equal(t, ref[3], got[3], "rope_kv v f32 (a copy)")
			} else {
				// an f16 K may round the other way when the rotation differs
				// in the last float bit
				worst = max(worst, kitCompare(t, kitAsF16(ref[2]), kitAsF16(got[2]), 1e-3, "rope_kv k f16"))
				require.Equal(t, ref[3], got[3], "rope_kv v f16 (a conversion)")
			}
		}
	}
	t.Logf("rope_kv: worst relative error %.3g", worst)
}
