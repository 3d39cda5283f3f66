package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSampleScaleAsm: the assembly's temperature pass writes the Go
// loop's quotients bit for bit and finds the same extremes, over NaN,
// ±Inf, overflowing quotients and sizes that leave a scalar tail.
func TestSampleScaleAsm(t *testing.T) {
	require.True(t, hasAVX2, "this amd64 machine has no AVX2 and FMA: the assembly is untested")
	r := rand.New(rand.NewPCG(33, 7))
	inf := float32(math.Inf(1))
	for _, temp := range []float32{0.7, 1, 1e-3, 1e3, 1e-30, inf} {
		for _, n := range []int{1, 7, 8, 9, 63, 8192, 49152 + 5} {
			for _, special := range []bool{false, true} {
				src := make([]float32, n)
				for i := range src {
					src[i] = float32(r.NormFloat64() * 3)
				}
				if special && n > 5 {
					src[0], src[n/2], src[n/3], src[n-1] = float32(math.NaN()), -inf, inf, float32(math.NaN())
					src[n/4] = -inf
				}
				want, got := make([]float32, n), make([]float32, n)
				whi, wlo := sampleScaleRowGeneric(want, src, temp, -inf, inf)
				ghi, glo := sampleScaleRowAVX2(got, src, temp, -inf, inf)
				for i := range want {
					if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
						require.Equal(t, want[i], got[i], "temp %g n=%d token %d: src %g", temp, n, i, src[i])
					}
				}
				require.True(t, whi == ghi || whi != whi && ghi != ghi, "temp %g n=%d: largest %g, want %g", temp, n, ghi, whi)
				require.True(t, wlo == glo || wlo != wlo && glo != glo, "temp %g n=%d: least %g, want %g", temp, n, glo, wlo)
			}
		}
	}
	// every logit −Inf: the least stays +Inf, the largest −Inf
	src := make([]float32, 16)
	for i := range src {
		src[i] = -inf
	}
	hi, lo := sampleScaleRowAVX2(make([]float32, 16), src, 0.7, -inf, inf)
	require.Equal(t, -inf, hi)
	require.Equal(t, inf, lo)
}
