package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// refLayerNorm is (x - mean)/sqrt(var + eps)·g + b in float64, the biased
// variance taken around the mean.
func refLayerNorm(x []float64, g, b []float32, eps float64) []float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	mean := s / float64(len(x))
	var q float64
	for _, v := range x {
		q += (v - mean) * (v - mean)
	}
	rs := 1 / math.Sqrt(q/float64(len(x))+eps)
	o := make([]float64, len(x))
	for i, v := range x {
		o[i] = (v-mean)*rs*float64(g[i]) + float64(b[i])
	}
	return o
}

// TestLayerNormMatVec: LayerNormMatVec against a float64 LayerNorm and
// product, for its three weight types, rows off zero mean, strided rows,
// bias and residual, and FlagGELUOut (bias, no residual).
func TestLayerNormMatVec(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 37))
	for _, typ := range []ggml.Type{ggml.F32, ggml.F16, ggml.Q8_0} {
		for _, gelu := range []bool{false, true} {
			n, k, m := 389, 416, 3
			ldx, ldo, ldr := k+3, n+2, n+5
			w, deq := weightsOf(t, r, typ, n, k)
			x := randVec(r, (m-1)*ldx+k, 2)
			for i := range x {
				x[i] += 3 // a mean the norm must take off
			}
			g, b := randVec(r, k, 1), randVec(r, k, 1)
			bias, res := randVec(r, n, 1), randVec(r, (m-1)*ldr+n, 1)
			h := newHarness(t)
			wb, xb, gb, bb := h.weights("w", w), h.f32("x", x), h.f32("g", g), h.f32("b", b)
			biasb, rb := h.f32("bias", bias), h.f32("res", res)
			ob := h.nan("out", (m-1)*ldo+n+1)
			a := plan.LayerNormMatVecArgs{Type: typ, W: bind(wb), X: bind(xb), Out: bind(ob), Bias: bind(biasb), Res: bind(rb),
				G: bind(gb), B: bind(bb), N: n, K: k, M: m, Ldx: ldx, Ldo: ldo, Ldr: ldr, Eps: 1e-5}
			if gelu {
				a.Res, a.Flags = plan.None, plan.FlagGELUOut
			}
			h.add(a.Dispatch())
			h.run(plan.Vars{})
			rows := make([][]float64, m)
			for i := range rows {
				rows[i] = refLayerNorm(toF64(x[i*ldx:i*ldx+k]), g, b, 1e-5)
			}
			want := refProduct(rows, deq, n, k, bias, res, ldr)
			if gelu {
				want = refProduct(rows, deq, n, k, bias, nil, 0)
				for i, v := range want {
					want[i] = gelu64(v)
				}
			}
			checkOut(t, h.readF32(ob), want, m, ldo, n, productTol(typ)*math.Sqrt(float64(k)), "layer_norm_mat_vec "+typ.String())
		}
	}
}

// TestLayerNormMatVecEqualsUnfused: the fused dispatch is exactly
// LayerNorm into a buffer, then MatVec (same row code, same product), with
// and without FlagGELUOut, which is what lets Whisper's plan take either.
func TestLayerNormMatVecEqualsUnfused(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 39))
	const n, k, m = 160, 384, 2
	for _, flags := range []uint32{0, plan.FlagGELUOut} {
		w, _ := weightsOf(t, r, ggml.Q8_0, n, k)
		x, g, b, bias := randVec(r, m*k, 2), randVec(r, k, 1), randVec(r, k, 1), randVec(r, n, 1)
		h := newHarness(t)
		wb, xb, gb, bb, biasb := h.weights("w", w), h.f32("x", x), h.f32("g", g), h.f32("b", b), h.f32("bias", bias)
		tmp, o1, o2 := h.nan("tmp", m*k), h.nan("o1", m*n), h.nan("o2", m*n)
		h.add(plan.LayerNormMatVecArgs{Type: ggml.Q8_0, W: bind(wb), X: bind(xb), Out: bind(o1), Bias: bind(biasb), Res: plan.None,
			G: bind(gb), B: bind(bb), N: n, K: k, M: m, Ldx: k, Ldo: n, Ldr: n, Flags: flags, Eps: 1e-5}.Dispatch())
		h.add(plan.LayerNormArgs{X: bind(xb), W: bind(gb), B: bind(bb), Out: bind(tmp), Dim: k, Rows: m, Ldx: k, Ldo: k, Eps: 1e-5}.Dispatch())
		h.add(plan.MatVecArgs{Type: ggml.Q8_0, W: bind(wb), X: bind(tmp), Out: bind(o2), Bias: bind(biasb), Res: plan.None,
			N: n, K: k, M: m, Ldx: k, Ldo: n, Ldr: n, Flags: flags}.Dispatch())
		h.run(plan.Vars{})
		require.Equal(t, h.read(o2), h.read(o1), "flags %#x", flags)
		require.False(t, math.IsNaN(float64(h.readF32(o1)[0])))
	}
}

// TestLayerNormMatVecTypes: the contract takes f32, f16 and q8_0 weights
// only (the GPU instances' types), and MatVec's flag rules.
func TestLayerNormMatVecTypes(t *testing.T) {
	a := plan.LayerNormMatVecArgs{Type: ggml.Q8_0, N: 4, K: 32, M: 1, Ldx: 32, Eps: 1e-5}
	for _, typ := range []ggml.Type{ggml.F32, ggml.F16, ggml.Q8_0} {
		a.Type = typ
		require.NoError(t, a.Check(), "%s", typ)
	}
	a.Type = ggml.Q4_0
	require.EqualError(t, a.Check(), "layer_norm_mat_vec: weight type q4_0 (f32, f16 or q8_0)")
	a.Type, a.Flags = ggml.Q8_0, 4
	require.Error(t, a.Check())
}
