package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// TestMatVecGELUOut: MatVec with FlagGELUOut writes gelu_erf(x·Wᵀ + bias)
// (Whisper's MLP up product, issue #34), odd sizes, one row and three (a
// quantized product of several rows returns with its helpers running: the
// GELU must wait for them), against the float64 product through exact GELU.
func TestMatVecGELUOut(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 43))
	for _, c := range []struct {
		typ     ggml.Type
		n, k, m int
	}{{ggml.F32, 37, 45, 1}, {ggml.F16, 1537, 384, 3}, {ggml.Q8_0, 1537, 384, 3}, {ggml.Q8_0, 1536, 384, 1}} {
		t.Run(c.typ.String(), func(t *testing.T) {
			w, deq := weightsOf(t, r, c.typ, c.n, c.k)
			ldx, ldo := c.k+5, c.n+3
			x, bias := randVec(r, (c.m-1)*ldx+c.k, 1), randVec(r, c.n, 1)
			h := newHarness(t)
			wb, xb, bb, ob := h.weights("w", w), h.f32("x", x), h.f32("bias", bias), h.nan("out", (c.m-1)*ldo+c.n+4)
			h.add(plan.MatVecArgs{Type: c.typ, W: bind(wb), X: bind(xb), Out: bind(ob), Bias: bind(bb), Res: plan.None,
				N: c.n, K: c.k, M: c.m, Ldx: ldx, Ldo: ldo, Flags: plan.FlagGELUOut}.Dispatch())
			h.run(plan.Vars{})
			rows := make([][]float64, c.m)
			for i := range rows {
				rows[i] = toF64(x[i*ldx : i*ldx+c.k])
			}
			want := refProduct(rows, deq, c.n, c.k, bias, nil, 0)
			for i, v := range want {
				want[i] = 0.5 * v * (1 + math.Erf(v/math.Sqrt2))
			}
			checkOut(t, h.readF32(ob), want, c.m, ldo, c.n, productTol(c.typ)*math.Sqrt(float64(c.k)), "gelu product")
		})
	}
}
