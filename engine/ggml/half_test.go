package ggml

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// halfValue decodes a binary16 independently of FP16ToFP32.
func halfValue(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e, m := int(h>>10)&0x1f, float64(h&0x3ff)
	switch e {
	case 0:
		return sign * math.Ldexp(m, -24)
	case 31:
		if m != 0 {
			return math.NaN()
		}
		return sign * math.Inf(1)
	}
	return sign * math.Ldexp(1024+m, e-25)
}

func TestHalfAllValues(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		f := FP16ToFP32(h)
		want := halfValue(h)
		if math.IsNaN(want) {
			require.True(t, math.IsNaN(float64(f)), "%#04x", h)
			back := FP32ToFP16(f)
			require.Equal(t, uint16(0x7c00), back&0x7c00, "%#04x stays NaN", h)
			require.NotZero(t, back&0x3ff, "%#04x stays NaN", h)
			continue
		}
		require.Equal(t, want, float64(f), "%#04x", h)
		require.Equal(t, math.Signbit(want), math.Signbit(float64(f)), "%#04x sign", h)
		require.Equal(t, h, FP32ToFP16(f), "round trip %#04x", h)
	}
}

// TestHalfRounding checks round-to-nearest-even at every midpoint between
// adjacent finite halves, and just either side of it.
func TestHalfRounding(t *testing.T) {
	for i := range 0x7bff { // positive finite halves except the largest
		lo, hi := uint16(i), uint16(i+1)
		mid := float32((halfValue(lo) + halfValue(hi)) / 2) // exact in float32
		even := lo
		if lo&1 == 1 {
			even = hi
		}
		require.Equal(t, even, FP32ToFP16(mid), "midpoint of %#04x", lo)
		require.Equal(t, even|0x8000, FP32ToFP16(-mid), "negative midpoint of %#04x", lo)
		require.Equal(t, lo, FP32ToFP16(math.Nextafter32(mid, 0)), "below midpoint of %#04x", lo)
		require.Equal(t, hi, FP32ToFP16(math.Nextafter32(mid, 1e9)), "above midpoint of %#04x", lo)
	}
	require.Equal(t, uint16(0x7c00), FP32ToFP16(65520), "overflow to inf")
	require.Equal(t, uint16(0x7bff), FP32ToFP16(65519), "largest finite")
	require.Equal(t, uint16(0), FP32ToFP16(math.Float32frombits(0x33000000)), "2^-25 ties to zero")
	require.Equal(t, uint16(1), FP32ToFP16(math.Nextafter32(math.Float32frombits(0x33000000), 1)))
}

func TestBF16AllValues(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		f := BF16ToFP32(h)
		require.Equal(t, uint32(h)<<16, math.Float32bits(f))
		if math.IsNaN(float64(f)) {
			require.True(t, math.IsNaN(float64(BF16ToFP32(FP32ToBF16(f)))))
			continue
		}
		require.Equal(t, h, FP32ToBF16(f), "round trip %#04x", h)
	}
	// Ties go to even, above the tie goes up.
	require.Equal(t, uint16(0x3f80), FP32ToBF16(math.Float32frombits(0x3f808000)))
	require.Equal(t, uint16(0x3f82), FP32ToBF16(math.Float32frombits(0x3f818000)))
	require.Equal(t, uint16(0x3f81), FP32ToBF16(math.Float32frombits(0x3f808001)))
}
