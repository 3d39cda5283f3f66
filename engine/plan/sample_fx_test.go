package plan

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSampleExpFx: the fixed-point mass is round(exp(d)·2^43) within one
// unit over the whole range it is used on, exact at the ends; the
// integers the draw uses are Uniform's, and the top-p and draw targets
// are floors of the exact products.
func TestSampleExpFx(t *testing.T) {
	require.Equal(t, SampleFxOne, SampleExpFx(0))
	require.Equal(t, SampleFxOne, SampleExpFx(float32(math.Copysign(0, -1))))
	require.Zero(t, SampleExpFx(-32))
	require.Zero(t, SampleExpFx(float32(math.Inf(-1))))
	require.Zero(t, SampleExpFx(float32(math.NaN())))
	r := rand.New(rand.NewPCG(43, 43))
	for range 20000 {
		d := -float32(r.Float64() * 32)
		want := math.Exp(float64(d)) * (1 << 43)
		require.InDelta(t, want, float64(SampleExpFx(d)), 1.0, "d=%v", d)
	}
	// the fast path is the kernel's series wherever it is taken: random
	// masses, every float32 of a few stretches, near 0 and near −32
	for range 300000 {
		d := -float32(r.Float64() * 32)
		require.Equal(t, expFxInt(d), SampleExpFx(d), "d=%v", d)
		require.Equal(t, SampleExpFx(d), SampleExpFxNearHalf(d), "d=%v", d)
	}
	// products near a half, the ones the CPU's assembly hands it
	near := 0
	for near < 2000 {
		d := -float32(r.Float64() * 32)
		v := math.Exp(float64(d)) * (1 << 43)
		if math.Abs(v-math.Floor(v)-0.5) < 0.02 {
			require.Equal(t, SampleExpFx(d), SampleExpFxNearHalf(d), "d=%v", d)
			near++
		}
	}
	for _, d := range []float32{0, float32(math.Copysign(0, -1)), -32, -40, float32(math.Inf(-1)), float32(math.NaN())} {
		require.Equal(t, SampleExpFx(d), SampleExpFxNearHalf(d), "d=%v", d)
	}
	for _, lo := range []float32{-1e-6, -0.25, -1, -7.5, -30.49, -31.99} {
		d := lo
		for range 20000 {
			require.Equal(t, expFxInt(d), SampleExpFx(d), "d=%v", d)
			d = math.Nextafter32(d, 0)
		}
	}
	for step := range uint64(100) {
		require.Equal(t, Uniform(7, step), float32(Uniform24(7, step))/(1<<24))
	}
	for range 1000 {
		a := r.Uint64() >> 20
		u24 := uint32(r.IntN(1 << 24))
		f := float32(r.Float64())
		require.Equal(t, floorMulShift(a, uint64(u24), 24), SampleMul24(a, u24), "a=%d u24=%d", a, u24)
		k := uint64(math.RoundToEven(float64(f) * (1 << 32)))
		require.Equal(t, floorMulShift(a, k, 32), SampleFrac(a, f), "a=%d f=%v", a, f)
	}
	require.Equal(t, SampleFxOne/2, SampleMinPFx(0.5))
	require.Equal(t, 2*SampleFxOne, SampleMinPFx(3), "min-p is capped at 2")
	require.Zero(t, SampleMinPFx(0))
}

// floorMulShift is floor(a·k / 2^s) in exact arithmetic.
func floorMulShift(a, k uint64, s uint) uint64 {
	p := new(big.Int).Mul(new(big.Int).SetUint64(a), new(big.Int).SetUint64(k))
	return p.Rsh(p, s).Uint64()
}
