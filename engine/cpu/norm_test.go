package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/plan"
)

func refRMSNorm(x []float64, w []float32, eps float64) []float64 {
	var ss float64
	for _, v := range x {
		ss += v * v
	}
	s := 1 / math.Sqrt(ss/float64(len(x))+eps)
	o := make([]float64, len(x))
	for i, v := range x {
		o[i] = v * s
		if w != nil {
			o[i] *= float64(w[i])
		}
	}
	return o
}

func TestRMSNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		name                       string
		dim, rows, ldx, ldo, inner int
		weight                     bool
		scale                      float64
	}{
		{"rows", 896, 5, 901, 899, 0, true, 2},
		{"noweight", 2560, 3, 2560, 2560, 1, false, 2},
		{"perhead", 64, 7, 3*64 + 5, 3*64 + 11, 3, true, 2}, // heads inside fused rows
		{"single", 51865, 1, 0, 0, 0, true, 2},
		{"tiny", 576, 2, 576, 576, 0, true, 1e-3}, // eps dominates
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inner := max(c.inner, 1)
			xl := rowsExtent(c.rows, inner, c.dim, c.ldx)
			ol := rowsExtent(c.rows, inner, c.dim, c.ldo) + 13
			x := randVec(r, xl, c.scale)
			w := randVec(r, c.dim, 1)
			h := newHarness(t)
			xb := h.f32("x", x)
			wb := plan.NoBuf
			if c.weight {
				wb = h.f32("w", w)
			} else {
				w = nil
			}
			ob := h.nan("out", ol)
			h.add(plan.RMSNormArgs{X: bind(xb), W: bind(wb), Out: bind(ob), Dim: int(c.dim), Rows: int(c.rows), Ldx: int(c.ldx), Ldo: int(c.ldo), Eps: 1e-5, Inner: int(c.inner)}.Dispatch())
			h.run(plan.Vars{})
			got := h.readF32(ob)
			// compare via a dense expansion of the grouped layout
			want := make([]float64, len(got))
			written := make([]bool, len(got))
			for rr := 0; rr < c.rows; rr++ {
				xo := (rr/inner)*c.ldx + (rr%inner)*c.dim
				oo := (rr/inner)*c.ldo + (rr%inner)*c.dim
				ref := refRMSNorm(toF64(x[xo:xo+c.dim]), w, 1e-5)
				for j := range ref {
					want[oo+j], written[oo+j] = ref[j], true
				}
			}
			checkGrouped(t, got, want, written, 2e-6)
		})
	}
}

// checkGrouped compares written elements and requires the rest poisoned.
func checkGrouped(t *testing.T, got []float32, want []float64, written []bool, tol float64) {
	t.Helper()
	for i, g := range got {
		if !written[i] {
			if !math.IsNaN(float64(g)) {
				t.Fatalf("element %d outside the output was written (%v)", i, g)
			}
			continue
		}
		if math.IsNaN(float64(g)) || math.Abs(float64(g)-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("element %d: got %v want %v", i, g, want[i])
		}
	}
}

func TestRMSNormInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	x := randVec(r, 3*896, 1)
	h := newHarness(t)
	xb := h.f32("x", x)
	h.add(plan.RMSNormArgs{X: bind(xb), W: plan.None, Out: bind(xb), Dim: 896, Rows: 3, Ldx: 896, Ldo: 896, Eps: 1e-6}.Dispatch())
	h.run(plan.Vars{})
	want := make([]float64, 0, len(x))
	for i := 0; i < 3; i++ {
		want = append(want, refRMSNorm(toF64(x[i*896:(i+1)*896]), nil, 1e-6)...)
	}
	checkOut(t, h.readF32(xb), want, 3, 896, 896, 2e-6, "in place")
}

func TestLayerNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	dim, rows, ldx, ldo := 384, 9, 390, 385
	x := randVec(r, (rows-1)*ldx+dim, 3)
	for i := range x {
		x[i] += 5 // a large mean stresses the variance computation
	}
	w, b := randVec(r, dim, 1), randVec(r, dim, 1)
	h := newHarness(t)
	xb, wb, bb := h.f32("x", x), h.f32("w", w), h.f32("b", b)
	ob := h.nan("out", (rows-1)*ldo+dim+4)
	h.add(plan.LayerNormArgs{X: bind(xb), W: bind(wb), B: bind(bb), Out: bind(ob), Dim: int(dim), Rows: int(rows), Ldx: int(ldx), Ldo: int(ldo), Eps: 1e-5}.Dispatch())
	h.run(plan.Vars{})
	want := make([]float64, rows*dim)
	for i := 0; i < rows; i++ {
		row := toF64(x[i*ldx : i*ldx+dim])
		var mean, vr float64
		for _, v := range row {
			mean += v
		}
		mean /= float64(dim)
		for _, v := range row {
			vr += (v - mean) * (v - mean)
		}
		vr /= float64(dim)
		for j, v := range row {
			want[i*dim+j] = (v-mean)/math.Sqrt(vr+1e-5)*float64(w[j]) + float64(b[j])
		}
	}
	checkOut(t, h.readF32(ob), want, rows, ldo, dim, 5e-6, "layernorm")
}
