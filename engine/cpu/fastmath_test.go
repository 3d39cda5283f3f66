package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExp32(t *testing.T) {
	r := rand.New(rand.NewPCG(46, 47))
	check := func(x float32) {
		got, want := float64(exp32(x)), math.Exp(float64(x))
		if want < 1.2e-38 { // below float32's normal range: flushed or tiny
			require.LessOrEqual(t, got, 1.2e-38, "x=%v", x)
			return
		}
		if want > math.MaxFloat32 {
			require.True(t, math.IsInf(got, 1), "x=%v", x)
			return
		}
		require.InDelta(t, 0, (got-want)/want, 4e-7, "x=%v got %v want %v", x, got, want)
	}
	for i := 0; i < 200000; i++ {
		check(float32((r.Float64()*2 - 1) * 90))
		check(float32((r.Float64()*2 - 1) * 2))
	}
	for _, x := range []float32{0, -0, 1, -1, 88.7, 88.72, 88.73, -87.3, -87.34, -87.4, -100, 100, float32(math.Inf(-1)), float32(math.Inf(1))} {
		check(x)
	}
	require.True(t, math.IsNaN(float64(exp32(float32(math.NaN())))))
	require.Equal(t, float32(1), exp32(0))
}

func BenchmarkExp32(b *testing.B) {
	x := make([]float32, 4096)
	for i := range x {
		x[i] = float32(i%200) * -0.1
	}
	var s float32
	for b.Loop() {
		for _, v := range x {
			s += exp32(v)
		}
	}
	_ = s
}
