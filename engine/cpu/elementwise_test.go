package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

func TestSiLUMul(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	n, m, ldg, ldu, ldo := 2560, 3, 2570, 2561, 2563
	g, u := randVec(r, (m-1)*ldg+n, 3), randVec(r, (m-1)*ldu+n, 1)
	h := newHarness(t)
	gb, ub, ob := h.f32("g", g), h.f32("u", u), h.nan("o", (m-1)*ldo+n+5)
	h.add(plan.SiLUMulArgs{Gate: bind(gb), Up: bind(ub), Out: bind(ob), N: int(n), M: int(m), Ldg: int(ldg), Ldu: int(ldu), Ldo: int(ldo)}.Dispatch())
	h.run(plan.Vars{})
	want := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			x := float64(g[i*ldg+j])
			want[i*n+j] = x / (1 + math.Exp(-x)) * float64(u[i*ldu+j])
		}
	}
	checkOut(t, h.readF32(ob), want, m, ldo, n, 1e-6, "silu_mul")
}

// geluTanh64 is GELU's tanh approximation in float64.
func geluTanh64(v float64) float64 {
	return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
}

func TestGELUMul(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	n, m, ldg, ldu, ldo := 1152, 3, 1160, 1153, 1155
	g, u := randVec(r, (m-1)*ldg+n, 4), randVec(r, (m-1)*ldu+n, 1)
	h := newHarness(t)
	gb, ub, ob := h.f32("g", g), h.f32("u", u), h.nan("o", (m-1)*ldo+n+5)
	h.add(plan.GELUMulArgs{Gate: bind(gb), Up: bind(ub), Out: bind(ob), N: n, M: m, Ldg: ldg, Ldu: ldu, Ldo: ldo}.Dispatch())
	h.run(plan.Vars{})
	want := make([]float64, m*n)
	for i := range m {
		for j := range n {
			want[i*n+j] = geluTanh64(float64(g[i*ldg+j])) * float64(u[i*ldu+j])
		}
	}
	checkOut(t, h.readF32(ob), want, m, ldo, n, 1e-6, "gelu_mul")
}

func TestGELU(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	n, m, ldx, ldo := 1537, 4, 1540, 1539
	x := randVec(r, (m-1)*ldx+n, 3)
	for mode, f := range []func(float64) float64{
		func(v float64) float64 { return 0.5 * v * (1 + math.Erf(v/math.Sqrt2)) },
		geluTanh64,
	} {
		h := newHarness(t)
		xb, ob := h.f32("x", x), h.nan("o", (m-1)*ldo+n+3)
		h.add(plan.GELUArgs{X: bind(xb), Out: bind(ob), N: int(n), M: int(m), Ldx: int(ldx), Ldo: int(ldo), Mode: plan.Activation(mode)}.Dispatch())
		h.run(plan.Vars{})
		want := make([]float64, m*n)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				want[i*n+j] = f(float64(x[i*ldx+j]))
			}
		}
		checkOut(t, h.readF32(ob), want, m, ldo, n, 1e-6, "gelu")
	}
	// the two modes really differ
	require.NotEqual(t, geluErf(1.3), geluTanh(1.3))
}

// gelu64 is the exact GELU in float64.
func gelu64(v float64) float64 { return 0.5 * v * (1 + math.Erf(v/math.Sqrt2)) }

// geluErfRowPaths are the exact GELU's row kernels this CPU can run, by
// instruction set (kernels_amd64_test.go adds its own).
var geluErfRowPaths = map[string]func(o, a []float32){"generic": geluErfRowGeneric}

// Each path of the exact GELU's row kernel (the portable loop, and the
// AVX2 assembly with its tail where the CPU has it) agrees with float64 at
// odd lengths, over the range the encoder's MLP feeds it and beyond: the
// tails of both signs, ±0, subnormals and overflow.
func TestGELUErfRow(t *testing.T) {
	paths := geluErfRowPaths
	r := rand.New(rand.NewPCG(21, 22))
	special := []float32{0, float32(math.Copysign(0, -1)), 1e-40, -1e-40, 1e-30, -5, 5, -9.5, 9.5, -14, -30, 30, -1e30, 1e30,
		float32(math.Inf(1)), 1, -1, 0.5, -0.5}
	for name, row := range paths {
		for _, n := range []int{0, 1, 7, 8, 9, 15, 17, 33, 63, 1537} {
			a := randVec(r, n, 3)
			copy(a, special)
			o := make([]float32, n+1)
			o[n] = 12345 // past the row: must stay
			row(o[:n], a)
			for i, x := range a {
				want := gelu64(float64(x))
				require.InDelta(t, want, float64(o[i]), 1e-6*(1+math.Abs(want)), "%s n=%d x=%g", name, n, x)
			}
			require.Equal(t, float32(12345), o[n], "%s n=%d: wrote past the row", name, n)
		}
		nan := []float32{float32(math.NaN()), float32(math.Inf(-1)), 1, 2, 3, 4, 5, 6, 7}
		o := make([]float32, len(nan))
		row(o, nan)
		require.True(t, math.IsNaN(float64(o[0])), "%s: NaN in, NaN out", name)
	}
}

func TestAddBroadcastAndScale(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	n, m, lda, ldo := 897, 5, 900, 899
	a := randVec(r, (m-1)*lda+n, 1)
	for _, ldb := range []int{0, 905} {
		b := randVec(r, max(m-1, 0)*ldb+n, 1)
		h := newHarness(t)
		ab, bb, ob := h.f32("a", a), h.f32("b", b), h.nan("o", (m-1)*ldo+n+2)
		sb := h.nan("s", (m-1)*ldo+n+2)
		h.add(plan.AddArgs{A: bind(ab), B: bind(bb), Out: bind(ob), N: int(n), M: int(m), Lda: int(lda), Ldb: int(ldb), Ldo: int(ldo)}.Dispatch())
		h.add(plan.ScaleArgs{X: bind(ab), Out: bind(sb), N: int(n), M: int(m), Ldx: int(lda), Ldo: int(ldo), Scale: -0.37}.Dispatch())
		h.run(plan.Vars{})
		want, wantS := make([]float64, m*n), make([]float64, m*n)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				want[i*n+j] = float64(a[i*lda+j]) + float64(b[i*ldb+j])
				wantS[i*n+j] = float64(a[i*lda+j]) * float64(float32(-0.37))
			}
		}
		checkOut(t, h.readF32(ob), want, m, ldo, n, 1e-7, "add")
		checkOut(t, h.readF32(sb), wantS, m, ldo, n, 1e-7, "scale")
	}
}

func TestCopyConverts(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	n, m, lds, ldd := 129, 3, 131, 140
	src := randVec(r, (m-1)*lds+n, 10)
	for _, typ := range []ggml.Type{ggml.F32, ggml.F16, ggml.BF16} {
		es := 4
		if typ != ggml.F32 {
			es = 2
		}
		h := newHarness(t)
		sb := h.f32("src", src)
		dstInit := make([]byte, es*((m-1)*ldd+n+3))
		for i := range dstInit {
			dstInit[i] = 0xAB // poison
		}
		db := h.buf("dst", dstInit)
		h.add(plan.CopyArgs{Type: typ, Src: bind(sb), Dst: bind(db), N: int(n), M: int(m), Lds: int(lds), Ldd: int(ldd)}.Dispatch())
		h.run(plan.Vars{})
		got := h.read(db)
		for i := 0; i < m; i++ {
			for j := 0; j < ldd && (i < m-1 || j < n+3); j++ {
				e := got[es*(i*ldd+j) : es*(i*ldd+j+1)]
				if j >= n {
					require.Equal(t, dstInit[:es], e, "%s: element (%d,%d) outside the rows was written", typ, i, j)
					continue
				}
				v := src[i*lds+j]
				switch typ {
				case ggml.F32:
					require.Equal(t, v, ggml.BytesF32(e)[0])
				case ggml.F16:
					require.Equal(t, ggml.FP32ToFP16(v), bytesU16(e)[0])
				case ggml.BF16:
					require.Equal(t, ggml.FP32ToBF16(v), bytesU16(e)[0])
				}
			}
		}
	}
}

func TestSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	n, m, ldx, ldo := 1500, 4, 1504, 1501
	x := randVec(r, (m-1)*ldx+n, 30) // large logits: needs max subtraction
	const scale = 0.125
	h := newHarness(t)
	xb, ob := h.f32("x", x), h.nan("o", (m-1)*ldo+n+6)
	h.add(plan.SoftmaxArgs{X: bind(xb), Out: bind(ob), N: int(n), M: int(m), Ldx: int(ldx), Ldo: int(ldo), Scale: scale}.Dispatch())
	h.run(plan.Vars{})
	want := make([]float64, m*n)
	for i := 0; i < m; i++ {
		refSoftmax(toF64(x[i*ldx:i*ldx+n]), scale, want[i*n:(i+1)*n])
	}
	checkOut(t, h.readF32(ob), want, m, ldo, n, 1e-5, "softmax")
}

func refSoftmax(x []float64, scale float64, out []float64) {
	mx := math.Inf(-1)
	for _, v := range x {
		mx = math.Max(mx, v*scale)
	}
	var s float64
	for i, v := range x {
		out[i] = math.Exp(v*scale - mx)
		s += out[i]
	}
	for i := range out[:len(x)] {
		out[i] /= s
	}
}

func TestArgmax(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	n, m, ldx := 51865, 3, 51870
	x := randVec(r, (m-1)*ldx+n, 1)
	x[0*ldx+100], x[0*ldx+40000] = 9, 9 // tie: the lower index wins
	x[1*ldx+n-1] = 7                    // last element
	x[2*ldx+5] = float32(math.NaN())    // NaN never wins
	x[2*ldx+6] = 8
	h := newHarness(t)
	xb := h.f32("x", x)
	ob := h.i32("o", []int32{-7, -7, -7, -7})
	h.add(plan.ArgmaxArgs{X: bind(xb), Out: bind(ob), N: int(n), M: int(m), Ldx: int(ldx)}.Dispatch())
	h.run(plan.Vars{})
	require.Equal(t, []int32{100, int32(n - 1), 6, -7}, h.readI32(ob))
}
