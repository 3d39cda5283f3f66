package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSampleBinsAsm: the assembly's histogram bins are binScale.bin's,
// over peaked, flat and equal logits, −Inf, the top itself and the
// least, at sizes that leave a scalar tail.
func TestSampleBinsAsm(t *testing.T) {
	require.True(t, hasAVX2, "this amd64 machine has no AVX2 and FMA: the assembly is untested")
	r := rand.New(rand.NewPCG(33, 8))
	gens := map[string]func() float32{
		"normal3":  func() float32 { return float32(r.NormFloat64() * 3 / 0.7) },
		"flat0.05": func() float32 { return float32(r.NormFloat64() * 0.05) },
		"equal":    func() float32 { return 1.5 },
		"wide":     func() float32 { return float32(r.Float64()*1e30 - 5e29) },
	}
	for name, g := range gens {
		for _, n := range []int{1, 3, 4, 5, 63, 4097, 49153} {
			l := make([]float32, n)
			for i := range l {
				l[i] = g()
			}
			if n > 5 {
				l[n/2], l[n/5] = float32(math.Inf(-1)), float32(math.Inf(-1))
			}
			hi, lo := float32(math.Inf(-1)), float32(math.Inf(1))
			for _, v := range l {
				hi = max(hi, v)
				if !math.IsInf(float64(v), -1) {
					lo = min(lo, v)
				}
			}
			s := newBinScale(hi, lo)
			want, got := make([]uint16, n), make([]uint16, n)
			sampleBinsOfGeneric(want, l, s)
			sampleBinsOfAVX2(got, l, s)
			require.Equal(t, want, got, "%s n=%d", name, n)
			if n > 5 {
				require.Equal(t, uint16(sampleBins), got[n/2], "%s n=%d: −Inf's bin", name, n)
			}
		}
	}
}
