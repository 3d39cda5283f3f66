package ggml

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// Properties on random data beyond the kit's ten rows: several rows at
// sizes other than 512, every output element written, and VecDot equal to
// an independent float64 evaluation of ggml's formula.

// maxRelRMSE bounds the quantization error of N(0,1) data relative to its
// RMS (the kit's roundtrip_rmse for its N(0,1) row, with headroom).
var maxRelRMSE = map[Type]float64{
	F32: 0, F16: 1e-3, BF16: 5e-3, Q8_0: 0.01, Q4_0: 0.15, Q4_1: 0.12, Q5_0: 0.07, Q5_1: 0.06,
	IQ4_NL: 0.12, Q2_K: 0.45, Q3_K: 0.25, Q4_K: 0.12, Q5_K: 0.06, Q6_K: 0.03, Q8_1: 0.01, Q8_K: 0.01,
}

func randNormal(r *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * scale)
	}
	return x
}

func TestRandomRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for typ, bound := range maxRelRMSE {
		name := typ.String()
		n := 3 * QK_K // a multiple of every block size
		if typ.BlockSize() < QK_K {
			n = 7 * 32 // an odd number of blocks
		}
		const rows = 3
		x := randNormal(r, rows*n, 1)
		q := make([]byte, rows*typ.TypeSize()*n/typ.BlockSize())
		require.NoError(t, Quantize(typ, x, q), name)

		// Row by row gives the same bytes as all rows at once.
		rb := len(q) / rows
		one := make([]byte, rb)
		for row := range rows {
			require.NoError(t, Quantize(typ, x[row*n:(row+1)*n], one), name)
			require.Equal(t, q[row*rb:(row+1)*rb], one, "%s row %d", name, row)
		}

		y := make([]float32, len(x))
		for i := range y {
			y[i] = float32(math.NaN())
		}
		require.NoError(t, Dequantize(typ, q, y), name)
		var se float64
		for i := range y {
			require.False(t, math.IsNaN(float64(y[i])), "%s element %d not written", name, i)
			d := float64(y[i] - x[i])
			se += d * d
		}
		require.LessOrEqual(t, math.Sqrt(se/float64(len(y))), bound, name)

		// Quantizing the dequantized values again is (nearly) stable for
		// the simple formats; at least the decoded values must not drift far.
		q2 := make([]byte, len(q))
		require.NoError(t, Quantize(typ, y, q2), name)
		y2 := make([]float32, len(y))
		require.NoError(t, Dequantize(typ, q2, y2), name)
		var se2 float64
		for i := range y {
			d := float64(y2[i] - y[i])
			se2 += d * d
		}
		require.LessOrEqual(t, math.Sqrt(se2/float64(len(y))), bound, name)
	}
}

// refDot evaluates ggml's vec_dot formula for weight type t in float64 from
// the dequantized operands: the exact dot, except that q4_1/q5_1 take each
// block's min term from the activation's stored s instead of d·Σq.
func refDot(t *testing.T, typ Type, n int, w, act []byte) float64 {
	at := traits[typ].VecDotType
	wf, af := make([]float32, n), make([]float32, n)
	require.NoError(t, Dequantize(typ, w, wf))
	require.NoError(t, Dequantize(at, act, af))
	var sum float64
	for i := range n {
		sum += float64(wf[i]) * float64(af[i])
	}
	if typ == Q4_1 || typ == Q5_1 {
		wb := typ.TypeSize()
		for b := range n / 32 {
			blk, ab := w[b*wb:], act[b*BlockQ8_1Bytes:]
			m := float64(half(blk[2:]))
			var exact float64
			for j := range 32 {
				exact += float64(af[32*b+j])
			}
			sum += m * (float64(half(ab[2:])) - exact)
		}
	}
	return sum
}

func TestRandomVecDot(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for typ := range vecDots {
		name := typ.String()
		for _, n := range []int{QK_K, 5 * QK_K} {
			for _, scale := range []float64{1, 0.02, 300} {
				x := randNormal(r, n, scale)
				a := randNormal(r, n, 1)
				w := make([]byte, typ.TypeSize()*n/typ.BlockSize())
				require.NoError(t, Quantize(typ, x, w), name)
				na, err := ActivationBytes(typ, n)
				require.NoError(t, err)
				act := make([]byte, na)
				require.NoError(t, QuantizeActivation(typ, a, act))
				got, err := VecDot(typ, n, w, act)
				require.NoError(t, err)
				want := refDot(t, typ, n, w, act)
				// float32 accumulation over n terms: allow n·eps of the
				// magnitude scale (|x|·|a| summed).
				mag := scale * float64(n)
				require.InDelta(t, want, float64(got), 2e-6*mag, "%s n=%d scale=%g", name, n, scale)
			}
		}
	}
}

func TestQ8KZeroBlock(t *testing.T) {
	x := make([]float32, 2*QK_K)
	for i := QK_K; i < 2*QK_K; i++ {
		x[i] = float32(i%7) - 3
	}
	b := make([]byte, 2*BlockQ8_KBytes)
	for i := range b {
		b[i] = 0xAA
	}
	require.NoError(t, Quantize(Q8_K, x, b))
	require.Equal(t, make([]byte, BlockQ8_KBytes), b[:BlockQ8_KBytes], "zero block is all zero")
	second := b[BlockQ8_KBytes:]
	var sum int32
	for _, q := range second[4 : 4+16] {
		sum += int32(int8(q))
	}
	require.Equal(t, sum, int32(int16(binary.LittleEndian.Uint16(second[260:]))), "bsums[0]")
	// The first element of largest magnitude (x=+3 at e=2) maps to -127 and
	// d is negative: ggml's sign convention.
	require.Equal(t, int8(-127), int8(second[4+2]))
	require.Equal(t, int8(127), int8(second[4+3]))
	require.Less(t, q8kD(second), float32(0))
}
