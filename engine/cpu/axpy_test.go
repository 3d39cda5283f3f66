package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
)

// The accumulation used by single-query attention agrees with a float64
// sum on every length (SIMD body and scalar tail), for f32 and f16 values.
func TestAxpy(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := 0; n <= 67; n++ {
		o := make([]float32, n)
		v := make([]float32, n)
		h := make([]uint16, n)
		want := make([]float64, n)
		wantH := make([]float64, n)
		for i := range o {
			o[i] = float32(r.NormFloat64())
			v[i] = float32(r.NormFloat64())
			h[i] = ggml.FP32ToFP16(v[i])
			want[i] = float64(o[i]) + 0.37*float64(v[i])
			wantH[i] = float64(o[i]) + 0.37*float64(ggml.FP16ToFP32(h[i]))
		}
		oh := append([]float32(nil), o...)
		axpyF32(o, 0.37, v)
		axpyHalfGeneric(oh, 0.37, h)
		for i := range o {
			require.InDelta(t, want[i], o[i], 1e-6, "f32 n=%d i=%d", n, i)
			require.InDelta(t, wantH[i], oh[i], 1e-6, "f16 n=%d i=%d", n, i)
		}
	}
}

// The vector exponential of the softmaxes agrees with exp32 and with the
// float64 sum, over the range softmax feeds it (down to the clamp).
func TestExpScaled(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 7, 8, 9, 64, 1500, 1501} {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.NormFloat64() * 20)
		}
		if n > 3 {
			s[0], s[1], s[2] = -500, 0, 1e-30 // far below the clamp, zero, tiny
		}
		mx := float32(0)
		if n > 0 {
			mx = maxScaled(s, 0.5)
		}
		want := append([]float32(nil), s...)
		wantSum := expScaledGeneric(want, 0.5, mx)
		got := append([]float32(nil), s...)
		gotSum := expScaled(got, 0.5, mx)
		for i := range got {
			require.InDelta(t, want[i], got[i], 2e-7*max(1, float64(want[i])), "n=%d i=%d x=%g", n, i, s[i]*0.5-mx)
		}
		require.InDelta(t, wantSum, gotSum, 1e-6*max(1, wantSum), "n=%d sum", n)
	}
}

// BenchmarkAxpy times one head's f32 value accumulation (hd 64 and 128),
// the call single-query attention's portable path makes once per key and
// head.
func BenchmarkAxpy(b *testing.B) {
	for _, n := range []int{64, 128} {
		o, v := make([]float32, n), make([]float32, n)
		for i := range v {
			v[i] = float32(i) / float32(n)
		}
		b.Run(fmt.Sprintf("f32/%d", n), func(b *testing.B) {
			for b.Loop() {
				axpyF32(o, 0.5, v)
			}
		})
	}
}
