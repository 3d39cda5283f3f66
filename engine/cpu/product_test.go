package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// weightsOf quantizes random rows into t and returns the bytes with their
// exact dequantized values (the reference multiplies those in float64).
func weightsOf(t testing.TB, r *rand.Rand, typ ggml.Type, n, k int) ([]byte, []float32) {
	src := randVec(r, n*k, 0.5)
	rb, err := ggml.RowBytes(typ, int64(k))
	require.NoError(t, err)
	w := make([]byte, int(rb)*n)
	require.NoError(t, ggml.Quantize(typ, src, w))
	deq := make([]float32, n*k)
	require.NoError(t, ggml.Dequantize(typ, w, deq))
	return w, deq
}

// refProduct: out[i,j] = Σ x[i,kk]·W[j,kk] + bias[j] + res[i,j] (dense
// x rows given, res with stride ldr or nil).
func refProduct(x [][]float64, w []float32, n, k int, bias []float32, res []float32, ldr int) []float64 {
	out := make([]float64, len(x)*n)
	for i, row := range x {
		for j := 0; j < n; j++ {
			var s float64
			for kk, v := range row {
				s += v * float64(w[j*k+kk])
			}
			if bias != nil {
				s += float64(bias[j])
			}
			if res != nil {
				s += float64(res[i*ldr+j])
			}
			out[i*n+j] = s
		}
	}
	return out
}

// productTol: quantized types multiply against x quantized to 8 bits, so
// they are compared loosely; the exactness of the block dots is MM's test.
func productTol(typ ggml.Type) float64 {
	switch typ {
	case ggml.F32:
		return 1e-5
	case ggml.F16, ggml.BF16:
		return 1e-4
	}
	return 3e-2
}

func TestMatProducts(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 29))
	cases := []struct {
		kernel  plan.Kernel
		typ     ggml.Type
		n, k, m int
	}{
		{plan.MatVec, ggml.F32, 897, 96, 1},
		{plan.MatVec, ggml.F16, 51865, 64, 1},
		{plan.MatVec, ggml.Q8_0, 257, 576, 3},
		{plan.MatMul, ggml.F32, 385, 384, 21},
		{plan.MatMul, ggml.Q4_0, 130, 256, 19},
	}
	for _, c := range cases {
		for _, extras := range []bool{false, true} {
			t.Run(c.kernel.String()+"_"+c.typ.String(), func(t *testing.T) {
				w, deq := weightsOf(t, r, c.typ, c.n, c.k)
				ldx, ldo, ldr := c.k+5, c.n+3, c.n+7
				x := randVec(r, (c.m-1)*ldx+c.k, 1)
				h := newHarness(t)
				wb, xb := h.weights("w", w), h.f32("x", x)
				ob := h.nan("out", (c.m-1)*ldo+c.n+4)
				bb, rb := plan.NoBuf, plan.NoBuf
				var bias, res []float32
				if extras {
					bias, res = randVec(r, c.n, 1), randVec(r, (c.m-1)*ldr+c.n, 1)
					bb, rb = h.f32("bias", bias), h.f32("res", res)
				}
				a := plan.MatVecArgs{Type: c.typ, W: bind(wb), X: bind(xb), Out: bind(ob), Bias: bind(bb), Res: bind(rb),
					N: c.n, K: c.k, M: c.m, Ldx: ldx, Ldo: ldo, Ldr: ldr}
				d := a.Dispatch()
				if c.kernel == plan.MatMul { // the same record
					d = plan.MatMulArgs(a).Dispatch()
				}
				h.add(d)
				h.run(plan.Vars{})
				rows := make([][]float64, c.m)
				for i := range rows {
					rows[i] = toF64(x[i*ldx : i*ldx+c.k])
				}
				want := refProduct(rows, deq, c.n, c.k, bias, res, ldr)
				checkOut(t, h.readF32(ob), want, c.m, ldo, c.n, productTol(c.typ)*math.Sqrt(float64(c.k)), "product")
			})
		}
	}
}

// TestResidualInPlace: res aliasing out is the transformer's x += f(x).
func TestResidualInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 31))
	n, k, m := 96, 64, 2
	w, deq := weightsOf(t, r, ggml.F32, n, k)
	x, res := randVec(r, m*k, 1), randVec(r, m*n, 1)
	h := newHarness(t)
	wb, xb, ob := h.weights("w", w), h.f32("x", x), h.f32("out", res)
	h.add(plan.MatMulArgs{Type: ggml.F32, W: bind(wb), X: bind(xb), Out: bind(ob), Bias: plan.None, Res: bind(ob), N: int(n), K: int(k), M: int(m), Ldx: int(k), Ldo: int(n), Ldr: int(n)}.Dispatch())
	h.run(plan.Vars{})
	rows := [][]float64{toF64(x[:k]), toF64(x[k:])}
	checkOut(t, h.readF32(ob), refProduct(rows, deq, n, k, nil, res, n), m, n, n, 1e-5, "residual")
}

// TestSingleRowIgnoresStrides: with m = 1 the strides may be left zero.
func TestSingleRowIgnoresStrides(t *testing.T) {
	r := rand.New(rand.NewPCG(44, 45))
	n, k := 33, 64
	w, deq := weightsOf(t, r, ggml.F16, n, k)
	x, res := randVec(r, k, 1), randVec(r, n, 1)
	h := newHarness(t)
	wb, xb, rb, ob := h.weights("w", w), h.f32("x", x), h.f32("res", res), h.nan("out", n+2)
	h.add(plan.MatVecArgs{Type: ggml.F16, W: bind(wb), X: bind(xb), Out: bind(ob), Bias: plan.None, Res: bind(rb), N: int(n), K: int(k), M: 1}.Dispatch())
	h.run(plan.Vars{})
	checkOut(t, h.readF32(ob), refProduct([][]float64{toF64(x)}, deq, n, k, nil, res, n), 1, n, n, 1e-4, "m=1")
}

func TestRMSNormMatVec(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 33))
	for _, typ := range []ggml.Type{ggml.F32, ggml.Q8_0} {
		n, k, m := 577, 896, 2
		ldx, ldo, ldr := k+1, n+2, n+3
		w, deq := weightsOf(t, r, typ, n, k)
		x, g := randVec(r, (m-1)*ldx+k, 2), randVec(r, k, 1)
		bias, res := randVec(r, n, 1), randVec(r, (m-1)*ldr+n, 1)
		h := newHarness(t)
		wb, xb, gb := h.weights("w", w), h.f32("x", x), h.f32("g", g)
		bb, rb := h.f32("bias", bias), h.f32("res", res)
		ob := h.nan("out", (m-1)*ldo+n+1)
		h.add(plan.RMSNormMatVecArgs{Type: typ, W: bind(wb), X: bind(xb), Out: bind(ob), Bias: bind(bb), Res: bind(rb), G: bind(gb), N: int(n), K: int(k), M: int(m), Ldx: int(ldx), Ldo: int(ldo), Ldr: int(ldr), Eps: 1e-5}.Dispatch())
		h.run(plan.Vars{})
		rows := make([][]float64, m)
		for i := range rows {
			rows[i] = refRMSNorm(toF64(x[i*ldx:i*ldx+k]), g, 1e-5)
		}
		want := refProduct(rows, deq, n, k, bias, res, ldr)
		checkOut(t, h.readF32(ob), want, m, ldo, n, productTol(typ)*math.Sqrt(float64(k)), "rms_norm_mat_vec "+typ.String())
	}
}

// The gated down projections: SiLUMulMatVec and GELUMulMatVec (Gemma).
func TestGatedMulMatVec(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 35))
	silu := func(v float64) float64 { return v / (1 + math.Exp(-v)) }
	for _, c := range []struct {
		kernel plan.Kernel
		act    func(float64) float64
		typ    ggml.Type
	}{{plan.SiLUMulMatVec, silu, ggml.F16}, {plan.SiLUMulMatVec, silu, ggml.Q4_0}, {plan.GELUMulMatVec, geluTanh64, ggml.F16}, {plan.GELUMulMatVec, geluTanh64, ggml.Q8_0}} {
		typ := c.typ
		n, k, m := 97, 2560, 3
		ldg, ldu, ldo, ldr := 2*k, 2*k, n+1, n
		w, deq := weightsOf(t, r, typ, n, k)
		gu := randVec(r, (m-1)*ldg+2*k, 1) // gate and up interleaved as one fused row
		res := randVec(r, (m-1)*ldr+n, 1)
		h := newHarness(t)
		wb, gub, rb := h.weights("w", w), h.f32("gu", gu), h.f32("res", res)
		ob := h.nan("out", (m-1)*ldo+n+2)
		d := plan.SiLUMulMatVecArgs{Type: typ, W: bind(wb), Gate: bind(gub), Out: bind(ob), Bias: plan.None, Res: bind(rb), Up: bind(gub), N: int(n), K: int(k), M: int(m), Ldg: int(ldg), Ldo: int(ldo), Ldr: int(ldr), Ldu: int(ldu)}.Dispatch()
		if c.kernel == plan.GELUMulMatVec {
			d = plan.GELUMulMatVecArgs{Type: typ, W: bind(wb), Gate: bind(gub), Out: bind(ob), Bias: plan.None, Res: bind(rb), Up: bind(gub), N: n, K: k, M: m, Ldg: ldg, Ldo: ldo, Ldr: ldr, Ldu: ldu}.Dispatch()
		}
		d.Bind[5].Off = uint64(4 * k) // up follows gate in each row
		h.add(d)
		h.run(plan.Vars{})
		rows := make([][]float64, m)
		for i := range rows {
			rows[i] = make([]float64, k)
			for j := range rows[i] {
				gv, uv := float64(gu[i*ldg+j]), float64(gu[i*ldg+k+j])
				rows[i][j] = c.act(gv) * uv
			}
		}
		want := refProduct(rows, deq, n, k, nil, res, ldr)
		checkOut(t, h.readF32(ob), want, m, ldo, n, productTol(typ)*math.Sqrt(float64(k)), c.kernel.String()+" "+typ.String())
	}
}

func TestConv1D(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 37))
	cases := []struct {
		name                          string
		typ                           ggml.Type
		cin, cout, T, kw, stride, pad int
		chanMajor                     bool
	}{
		{"mel_frontend", ggml.F16, 80, 67, 301, 3, 1, 1, true},
		{"stride2", ggml.F32, 67, 45, 301, 3, 2, 1, false},
		{"nopad_wide", ggml.F32, 5, 7, 40, 5, 3, 0, false},
		{"chanmajor_stride2", ggml.F16, 16, 24, 33, 3, 2, 1, true},
		{"tiled", ggml.F32, 8, 9, 50, 3, 1, 1, false}, // 24-float rows, 100-float tiles
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "tiled" {
				old := convTileFloats
				convTileFloats = 100
				defer func() { convTileFloats = old }()
			}
			tout := (c.T+2*c.pad-c.kw)/c.stride + 1
			k := c.cin * c.kw
			w, deq := weightsOf(t, r, c.typ, c.cout, k)
			xm, xn := c.T, c.cin
			if c.chanMajor {
				xm, xn = c.cin, c.T
			}
			ldx, ldo := xn+3, c.cout+2
			x := randVec(r, (xm-1)*ldx+xn, 1)
			bias := randVec(r, c.cout, 1)
			h := newHarness(t)
			wb, xb, bb := h.weights("w", w), h.f32("x", x), h.f32("b", bias)
			ob := h.nan("out", (tout-1)*ldo+c.cout+3)
			flags := uint32(0)
			if c.chanMajor {
				flags = plan.FlagChannelMaj
			}
			h.add(plan.Conv1DArgs{Type: c.typ, W: bind(wb), X: bind(xb), Bias: bind(bb), Out: bind(ob), Cin: int(c.cin), Cout: int(c.cout), T: int(c.T), Kw: int(c.kw), Stride: int(c.stride), Pad: int(c.pad), Flags: uint32(flags), Ldx: int(ldx), Ldo: int(ldo)}.Dispatch())
			h.run(plan.Vars{})
			in := func(tt, ci int) float64 {
				if tt < 0 || tt >= c.T {
					return 0
				}
				if c.chanMajor {
					return float64(x[ci*ldx+tt])
				}
				return float64(x[tt*ldx+ci])
			}
			want := make([]float64, tout*c.cout)
			for to := 0; to < tout; to++ {
				for co := 0; co < c.cout; co++ {
					s := float64(bias[co])
					for ci := 0; ci < c.cin; ci++ {
						for j := 0; j < c.kw; j++ {
							s += float64(deq[co*k+ci*c.kw+j]) * in(to*c.stride+j-c.pad, ci)
						}
					}
					want[to*c.cout+co] = s
				}
			}
			checkOut(t, h.readF32(ob), want, tout, ldo, c.cout, productTol(c.typ)*math.Sqrt(float64(k)), "conv1d")
		})
	}
}

// TestFusedEqualsUnfused: the fused kernels are exactly their two-step
// sequences (same row code, same product), which is what lets model code
// choose either form.
func TestFusedEqualsUnfused(t *testing.T) {
	r := rand.New(rand.NewPCG(48, 49))
	const n, k, m = 160, 576, 2
	w, _ := weightsOf(t, r, ggml.Q8_0, n, k)
	x, g, up := randVec(r, m*k, 1), randVec(r, k, 1), randVec(r, m*k, 1)
	h := newHarness(t)
	wb, xb, gb, ub := h.weights("w", w), h.f32("x", x), h.f32("g", g), h.f32("up", up)
	tmp := h.nan("tmp", m*k)
	o1, o2, o3, o4 := h.nan("o1", m*n), h.nan("o2", m*n), h.nan("o3", m*n), h.nan("o4", m*n)
	h.add(plan.RMSNormMatVecArgs{Type: ggml.Q8_0, W: bind(wb), X: bind(xb), Out: bind(o1), Bias: plan.None, Res: plan.None, G: bind(gb), N: int(n), K: int(k), M: int(m), Ldx: int(k), Ldo: int(n), Ldr: int(n), Eps: 1e-6}.Dispatch())
	h.add(plan.RMSNormArgs{X: bind(xb), W: bind(gb), Out: bind(tmp), Dim: int(k), Rows: int(m), Ldx: int(k), Ldo: int(k), Eps: 1e-6}.Dispatch())
	h.add(plan.MatVecArgs{Type: ggml.Q8_0, W: bind(wb), X: bind(tmp), Out: bind(o2), Bias: plan.None, Res: plan.None, N: int(n), K: int(k), M: int(m), Ldx: int(k), Ldo: int(n), Ldr: int(n)}.Dispatch())
	h.add(plan.SiLUMulMatVecArgs{Type: ggml.Q8_0, W: bind(wb), Gate: bind(xb), Out: bind(o3), Bias: plan.None, Res: plan.None, Up: bind(ub), N: int(n), K: int(k), M: int(m), Ldg: int(k), Ldo: int(n), Ldr: int(n), Ldu: int(k)}.Dispatch())
	h.add(plan.SiLUMulArgs{Gate: bind(xb), Up: bind(ub), Out: bind(tmp), N: int(k), M: int(m), Ldg: int(k), Ldu: int(k), Ldo: int(k)}.Dispatch())
	h.add(plan.MatVecArgs{Type: ggml.Q8_0, W: bind(wb), X: bind(tmp), Out: bind(o4), Bias: plan.None, Res: plan.None, N: int(n), K: int(k), M: int(m), Ldx: int(k), Ldo: int(n), Ldr: int(n)}.Dispatch())
	h.run(plan.Vars{})
	require.Equal(t, h.read(o2), h.read(o1), "rms_norm_mat_vec")
	require.Equal(t, h.read(o4), h.read(o3), "silu_mul_mat_vec")
	require.False(t, math.IsNaN(float64(h.readF32(o1)[0])))
}
