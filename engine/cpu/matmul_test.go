package cpu

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/blas"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
	"github.com/stretchr/testify/require"
)

var allTypes = []ggml.Type{ggml.F32, ggml.F16, ggml.BF16, ggml.Q4_0, ggml.Q4_1, ggml.Q5_0, ggml.Q5_1,
	ggml.Q8_0, ggml.Q2_K, ggml.Q3_K, ggml.Q4_K, ggml.Q5_K, ggml.Q6_K, ggml.IQ4_NL}

// scaleOffsets lists, per quantized type, the byte offsets of the f16
// scales inside a block; random bytes there would give NaN or huge scales.
var scaleOffsets = map[ggml.Type][]int{
	ggml.Q4_0: {0}, ggml.Q4_1: {0, 2}, ggml.Q5_0: {0}, ggml.Q5_1: {0, 2}, ggml.Q8_0: {0},
	ggml.IQ4_NL: {0}, ggml.Q2_K: {80, 82}, ggml.Q3_K: {108}, ggml.Q4_K: {0, 2}, ggml.Q5_K: {0, 2},
	ggml.Q6_K: {208},
}

// randWeights returns n rows of k random elements of type t.
func randWeights(r *rand.Rand, t ggml.Type, n, k int) []byte {
	rb, err := ggml.RowBytes(t, int64(k))
	if err != nil {
		panic(err)
	}
	w := make([]byte, n*int(rb))
	switch t {
	case ggml.F32:
		for i := 0; i < len(w); i += 4 {
			binary.LittleEndian.PutUint32(w[i:], math.Float32bits(float32(r.NormFloat64())))
		}
	case ggml.F16:
		for i := 0; i < len(w); i += 2 {
			binary.LittleEndian.PutUint16(w[i:], ggml.FP32ToFP16(float32(r.NormFloat64())))
		}
	case ggml.BF16:
		for i := 0; i < len(w); i += 2 {
			binary.LittleEndian.PutUint16(w[i:], ggml.FP32ToBF16(float32(r.NormFloat64())))
		}
	default:
		for i := range w {
			w[i] = byte(r.Uint32())
		}
		ts := t.TypeSize()
		for b := 0; b < len(w)/ts; b++ {
			for _, off := range scaleOffsets[t] {
				s := float32(0.01 + 0.05*r.Float64())
				if r.IntN(4) == 0 && off != 0 {
					s = -s // mins may be negative
				}
				binary.LittleEndian.PutUint16(w[b*ts+off:], ggml.FP32ToFP16(s))
			}
		}
	}
	return w
}

func randF32(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

func nanFill(s []float32) {
	for i := range s {
		s[i] = float32(math.NaN())
	}
}

// refMul is the float64 reference: dequantized W against unquantized x.
// It also returns Σ|w·x| per output, the scale for the tolerance.
func refMul(t ggml.Type, w []byte, n, k, m int, x []float32, ldx int, bias, res []float32, ldr int) (want, mag []float64) {
	kd := kinds[t]
	rb := len(w) / n
	row := make([]float32, k)
	want, mag = make([]float64, m*n), make([]float64, m*n)
	for j := 0; j < n; j++ {
		dequantRow(kd, w[j*rb:(j+1)*rb], row)
		for i := 0; i < m; i++ {
			var s, a float64
			for p := 0; p < k; p++ {
				v := float64(row[p]) * float64(x[i*ldx+p])
				s += v
				a += math.Abs(v)
			}
			if bias != nil {
				s += float64(bias[j])
			}
			if res != nil {
				s += float64(res[i*ldr+j])
			}
			want[i*n+j], mag[i*n+j] = s, a
		}
	}
	return want, mag
}

// tolFor is the allowed error relative to Σ|w·x|: float types only round
// in float32; quantized types also quantize x to 8 bits per block, unless
// the activations stay float.
func tolFor(t ggml.Type, floatActs bool) float64 {
	switch t {
	case ggml.F32, ggml.F16, ggml.BF16:
		return 1e-5
	}
	if floatActs {
		return 1e-5
	}
	return 1.5e-2
}

type mulCase struct {
	n, k, m          int
	ldxPad, ldoPad   int
	bias, res, alias bool
	pack             bool // repack the weights first (MatMul.Pack)
}

// checkMul returns the output it checked (NaN in the row padding).
func checkMul(t *testing.T, mm *MatMul, r *rand.Rand, typ ggml.Type, c mulCase) []float32 {
	t.Helper()
	w := randWeights(r, typ, c.n, c.k)
	ldx, ldo := c.k+c.ldxPad, c.n+c.ldoPad
	x := randF32(r, (c.m-1)*ldx+c.k)
	out := make([]float32, (c.m-1)*ldo+c.n+c.ldoPad)
	nanFill(out)
	var bias, res []float32
	ldr := 0
	if c.bias {
		bias = randF32(r, c.n)
	}
	if c.res {
		if c.alias {
			res, ldr = out, ldo
			for i := 0; i < c.m; i++ {
				copy(out[i*ldo:i*ldo+c.n], randF32(r, c.n))
			}
		} else {
			ldr = c.n + 5
			res = randF32(r, (c.m-1)*ldr+c.n)
		}
	}
	want, mag := refMul(typ, w, c.n, c.k, c.m, x, ldx, bias, res, ldr)
	if c.pack {
		mm.Pack(typ, w, c.n, c.k)
	}
	require.NoError(t, mm.Mul(typ, w, c.n, c.k, c.m, x, ldx, out, ldo, bias, res, ldr))
	tol := tolFor(typ, mm.floatActs)
	for i := 0; i < c.m; i++ {
		for j := 0; j < c.n; j++ {
			got := float64(out[i*ldo+j])
			require.False(t, math.IsNaN(got), "%s %+v: out[%d,%d] not written", typ, c, i, j)
			require.InDelta(t, want[i*c.n+j], got, tol*mag[i*c.n+j]+1e-4,
				"%s %+v: out[%d,%d]", typ, c, i, j)
		}
		// Padding between rows must be untouched.
		for j := c.n; j < ldo && i*ldo+j < len(out); j++ {
			require.True(t, math.IsNaN(float64(out[i*ldo+j])), "%s %+v: padding out[%d,%d] written", typ, c, i, j)
		}
	}
	return out
}

func TestMatMulAllTypes(t *testing.T) {
	pool := NewPool(0)
	defer pool.Close()
	r := rand.New(rand.NewPCG(7, 11))
	cases := []mulCase{
		{n: 1, k: 256, m: 1},
		{n: 51, k: 512, m: 1, bias: true},
		{n: 37, k: 256, m: 3, ldxPad: 3, ldoPad: 2, bias: true, res: true},
		{n: 29, k: 768, m: 5, res: true, alias: true, ldoPad: 1},
		{n: 45, k: 256, m: 17, bias: true, res: true, alias: true},
		{n: 33, k: 512, m: 19, ldxPad: 1, ldoPad: 3, bias: true, res: true},
	}
	for _, blasOn := range []bool{true, false} {
		mm := NewMatMul(pool)
		mm.noBLAS = !blasOn
		for _, typ := range allTypes {
			for _, c := range cases {
				checkMul(t, mm, r, typ, c)
			}
		}
	}
}

// FloatActivations: quantized weights against float activations agree
// with the float64 reference to float32 rounding (1e-5 of Σ|w·x|), on the
// row path and the GEMM path, where the default path's 8-bit activations
// are off by far more (so the tolerance tells the two apart).
func TestMatMulFloatActivations(t *testing.T) {
	pool := NewPool(0)
	defer pool.Close()
	r := rand.New(rand.NewPCG(13, 17))
	cases := []mulCase{
		{n: 51, k: 512, m: 1, bias: true},
		{n: 29, k: 768, m: 5, res: true, alias: true, ldoPad: 1},
		{n: 33, k: 512, m: 19, ldxPad: 1, ldoPad: 3, bias: true, res: true},
	}
	for _, blasOn := range []bool{true, false} {
		mm := NewMatMul(pool)
		mm.noBLAS, mm.floatActs = !blasOn, true
		for _, typ := range allTypes {
			for _, c := range cases {
				checkMul(t, mm, r, typ, c)
			}
		}
	}

	// The default path is not within that bound.
	mm := NewMatMul(pool)
	n, k := 64, 512
	w := randWeights(r, ggml.Q8_0, n, k)
	x := randF32(r, k)
	out := make([]float32, n)
	require.NoError(t, mm.Mul(ggml.Q8_0, w, n, k, 1, x, k, out, n, nil, nil, 0))
	want, mag := refMul(ggml.Q8_0, w, n, k, 1, x, k, nil, nil, 0)
	worst := 0.0
	for j := range out {
		worst = max(worst, math.Abs(float64(out[j])-want[j])/mag[j])
	}
	require.Greater(t, worst, 1e-4, "8-bit activations")
}

// The backend option reaches the executors' products.
func TestFloatActivationsOption(t *testing.T) {
	for _, on := range []bool{false, true} {
		b := New(Options{Threads: 1, FloatActivations: on})
		e, err := b.Load(&plan.Plan{Name: "empty"})
		require.NoError(t, err)
		require.Equal(t, on, e.(*Exec).mm.floatActs)
		b.Close()
	}
}

// A large odd n (Whisper's vocabulary) exercises chunking edges.
func TestMatMulLargeOddN(t *testing.T) {
	pool := NewPool(0)
	defer pool.Close()
	mm := NewMatMul(pool)
	r := rand.New(rand.NewPCG(3, 5))
	n := 51865
	if testing.Short() {
		n = 4099
	}
	for _, typ := range []ggml.Type{ggml.F32, ggml.F16, ggml.Q8_0, ggml.Q4_0, ggml.Q4_K, ggml.Q6_K} {
		checkMul(t, mm, r, typ, mulCase{n: n, k: 256, m: 1, bias: true})
	}
	checkMul(t, mm, r, ggml.Q4_K, mulCase{n: 2053, k: 256, m: 33, bias: true})
}

func TestMatMulErrors(t *testing.T) {
	pool := NewPool(1)
	defer pool.Close()
	mm := NewMatMul(pool)
	w := make([]byte, 4*34)
	x := make([]float32, 64)
	out := make([]float32, 8)
	err := mm.Mul(ggml.IQ2_XXS, w, 1, 256, 1, x, 256, out, 1, nil, nil, 0)
	require.ErrorContains(t, err, "iq2_xxs")
	require.ErrorContains(t, mm.Mul(ggml.Type(999), w, 1, 32, 1, x, 32, out, 1, nil, nil, 0), "type(999)")
	require.Error(t, mm.Mul(ggml.Q8_0, w, 2, 48, 1, x, 48, out, 2, nil, nil, 0), "k not a block multiple")
	require.Error(t, mm.Mul(ggml.Q8_0, w, 5, 32, 1, x, 32, out, 5, nil, nil, 0), "short weights")
	require.Error(t, mm.Mul(ggml.Q8_0, w, 2, 64, 2, x, 64, out, 2, nil, nil, 0), "short x")
	require.Error(t, mm.Mul(ggml.Q8_0, w, 2, 32, 1, x, 31, out, 2, nil, nil, 0), "ldx < k")
	require.Error(t, mm.Mul(ggml.Q8_0, w, 4, 32, 2, x, 32, out, 4, make([]float32, 3), nil, 0), "short bias")
	require.Error(t, mm.Mul(ggml.Q8_0, w, 4, 32, 2, x, 32, out, 4, nil, make([]float32, 5), 4), "short res")
	require.Error(t, mm.Mul(ggml.Q8_0, w, 2, 32, 2, x, 32, out, 3, nil, out[1:], 3), "res partly overlaps out")
	require.Error(t, mm.Mul(ggml.F32, make([]byte, 4*32*2), 2, 32, 1, x, 32, x[1:], 2, nil, nil, 0), "x overlaps out")
	require.Error(t, mm.Mul(ggml.F32, w, -1, 32, 1, x, 32, out, 2, nil, nil, 0))
	require.NoError(t, mm.Mul(ggml.F32, w, 0, 32, 1, x, 32, out, 2, nil, nil, 0))
}

func TestMatMulNoAllocAfterWarmup(t *testing.T) {
	pool := NewPool(0)
	defer pool.Close()
	mm := NewMatMul(pool)
	r := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		typ     ggml.Type
		n, k, m int
	}{{ggml.Q4_K, 64, 256, 1}, {ggml.Q8_0, 64, 256, 4}, {ggml.Q4_0, 64, 256, 32}, {ggml.F32, 64, 256, 32}} {
		w := randWeights(r, c.typ, c.n, c.k)
		x := randF32(r, c.m*c.k)
		out := make([]float32, c.m*c.n)
		bias := randF32(r, c.n)
		run := func() { require.NoError(t, mm.Mul(c.typ, w, c.n, c.k, c.m, x, c.k, out, c.n, bias, out, c.n)) }
		run()
		// The BLAS path (m >= gemmMinM) pays purego's one allocation per
		// sgemm call, one call per chunk of rows when the pool splits it.
		allowed := 1.0
		if c.m >= gemmMinM && pool.Workers() > 1 {
			allowed = float64(splitCalls(c.n, c.m, c.k, pool.Workers()))
		}
		require.LessOrEqual(t, testing.AllocsPerRun(5, run), allowed, "%s m=%d", c.typ, c.m)
	}
}

// gemmSplit's tiles cut along the input rows where the weight rows leave
// workers idle (Whisper's attention values product): the float64 reference
// holds with the cut on and off, on 2 to 5 workers, at odd sizes with
// padding, bias, residual and aliasing.
func TestMatMulSplitTiles(t *testing.T) {
	if !blas.Available() {
		t.Skip("no BLAS library here: gemmSplit does not run")
	}
	saved, savedMin := blas.Threads(), splitMinM
	defer func() { blas.SetThreads(saved); splitMinM = savedMin }()
	blas.SetThreads(1)
	r := rand.New(rand.NewPCG(29, 31))
	cases := []mulCase{
		{n: 37, k: 129, m: 101, bias: true},
		{n: 64, k: 1501, m: 67, ldxPad: 3, ldoPad: 2},
		{n: 45, k: 256, m: 53, bias: true, res: true, alias: true},
		{n: 33, k: 512, m: 40, ldxPad: 1, ldoPad: 3, bias: true, res: true},
	}
	for _, workers := range []int{2, 3, 5} {
		pool := NewPool(workers)
		mm := NewMatMul(pool)
		mm.qgemm = qgemmOff // quantized weights through dequantized tiles too
		for _, cut := range []bool{true, false} {
			splitMinM = savedMin
			if !cut {
				splitMinM = 1 << 30
			}
			for _, c := range cases {
				rows, mrows := splitTiles(c.n, c.m, c.k, workers)
				idle := (c.n+rows-1)/rows < workers
				require.Equal(t, cut && idle, mrows < c.m, "workers %d %+v: cut along m", workers, c)
				if workers == 5 {
					require.True(t, idle, "workers %d %+v: the case leaves workers idle", workers, c)
				}
				for _, typ := range []ggml.Type{ggml.F32, ggml.F16, ggml.Q8_0} {
					if c.k%typ.BlockSize() != 0 {
						continue // odd depths for the float types only
					}
					checkMul(t, mm, r, typ, c)
				}
			}
		}
		pool.Close()
	}
}
