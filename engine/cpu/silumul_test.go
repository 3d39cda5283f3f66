package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSiLUMulRowBitExact: the row kernel the decode's gated products use
// gives silu(a)·b of the portable loop bit for bit, on rows of every
// length up to 70 and an FFN's width, with values across exp32's range,
// its special cases (beyond ±87, NaN, infinities) and zeros.
func TestSiLUMulRowBitExact(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 3))
	special := []float32{0, float32(math.Copysign(0, -1)), 87, -87, 87.5, -87.5, 88.8, -88, 100, -100,
		float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}
	for _, n := range append(rangeN(71), 1536, 1536) {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(10)-3)))
			b[i] = float32(r.NormFloat64())
			if r.IntN(50) == 0 {
				a[i] = special[r.IntN(len(special))]
			}
		}
		want, got := make([]float32, n), make([]float32, n)
		siluMulRowGeneric(want, a, b)
		siluMulRow(got, a, b)
		for i := range want {
			require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "n=%d i=%d a=%g b=%g", n, i, a[i], b[i])
		}
	}
}

func rangeN(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func BenchmarkSiLUMulRow(b *testing.B) {
	r := rand.New(rand.NewPCG(37, 4))
	x, y, o := make([]float32, 1536), make([]float32, 1536), make([]float32, 1536)
	for i := range x {
		x[i], y[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	b.Run("generic", func(b *testing.B) {
		for b.Loop() {
			siluMulRowGeneric(o, x, y)
		}
	})
	b.Run("row", func(b *testing.B) {
		for b.Loop() {
			siluMulRow(o, x, y)
		}
	})
}
