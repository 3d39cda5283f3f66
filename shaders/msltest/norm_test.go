package msltest

import (
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// RMSNorm with grouped rows (per-head norms inside a wider row), with and
// without the scale, in place and not; LayerNorm with and without w/b.
func TestNormKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	worst := 0.0
	for _, c := range []struct{ dim, rows, inner, ldx, ldo int }{
		{1, 1, 0, 1, 1},
		{37, 3, 0, 40, 37},
		{64, 6, 3, 200, 192}, // 2 groups of 3 heads, padded input rows
		{80, 4, 4, 320, 320}, // all heads of one row
		{1500, 2, 1, 1500, 1600},
	} {
		for _, scaled := range []bool{true, false} {
			for _, alias := range []bool{false, true} {
				inner := max(1, c.inner)
				n := (c.rows-1)/inner*c.ldx + (c.rows-1)%inner*c.dim + c.dim + 3
				x := kitRand(r, n, 2)
				w := kitRand(r, c.dim, 1)
				var wb []byte
				if scaled {
					wb = kitF32(w)
				}
				d := plan.RMSNormArgs{Dim: int(c.dim), Rows: int(c.rows), Ldx: int(c.ldx), Ldo: int(c.ldo), Eps: 1e-5, Inner: int(c.inner)}.Dispatch()
				init := [][]byte{kitF32(x), wb, kitF32(kitNaNs((c.rows-1)/inner*c.ldo + (c.rows-1)%inner*c.dim + c.dim + 2))}
				if alias {
					// out is x's buffer, with x's strides
					a := plan.DecodeRMSNorm(&d)
					a.Ldo = a.Ldx
					d.P = a.Dispatch().P
					ref, got := kitRunAlias(t, d, init, map[int]int{2: 0})
					worst = max(worst, kitCompare(t, ggml.BytesF32(ref[2]), ggml.BytesF32(got[2]), 2e-6, "rms_norm in place"))
					continue
				}
				ref, got := kitRun(t, d, init)
				worst = max(worst, kitCompare(t, ggml.BytesF32(ref[2]), ggml.BytesF32(got[2]), 2e-6, "rms_norm"))
			}
		}
	}
	for _, c := range []struct{ dim, rows, ldx, ldo int }{{1, 1, 1, 1}, {384, 5, 384, 400}, {1000, 3, 1003, 1000}} {
		for _, wb := range []bool{true, false} {
			x := kitRand(r, c.rows*c.ldx, 3)
			for i := range x {
				x[i] += 5 // a mean far from 0 exercises the two-pass variance
			}
			var w, b []byte
			if wb {
				w, b = kitF32(kitRand(r, c.dim, 1)), kitF32(kitRand(r, c.dim, 1))
			}
			d := plan.LayerNormArgs{Dim: int(c.dim), Rows: int(c.rows), Ldx: int(c.ldx), Ldo: int(c.ldo), Eps: 1e-5}.Dispatch()
			ref, got := kitRun(t, d, [][]byte{kitF32(x), w, b, kitF32(kitNaNs(c.rows * c.ldo))})
			worst = max(worst, kitCompare(t, ggml.BytesF32(ref[3]), ggml.BytesF32(got[3]), 2e-5, "layer_norm"))
		}
	}
	t.Logf("norms: worst relative error %.3g", worst)
}
