package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/stretchr/testify/require"
)

// TestDotKernelsMatchPortable compares the kernels in use (SIMD where the
// CPU has it) with the portable ones on random data, odd lengths included.
func TestDotKernelsMatchPortable(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for n := 0; n <= 200; n += 1 + n/16 {
		a, b := randF32(r, n), randF32(r, n)
		var mag float64
		for i := range a {
			mag += math.Abs(float64(a[i] * b[i]))
		}
		require.InDelta(t, dotF32Generic(a, b), dotF32(a, b), 1e-5*mag+1e-6, "f32 n=%d", n)
		if n > 0 {
			w := randWeights(r, ggml.F16, 1, n)
			require.InDelta(t, dotF16Generic(w, a), kinds[ggml.F16].dotF(w, a), 1e-5*mag*4+1e-5, "f16 n=%d", n)
		}
	}
	portable := map[ggml.Type]func(w, x []byte, nb int) float32{
		ggml.Q8_0: dotQ8_0Generic, ggml.Q4_0: dotQ4_0Generic, ggml.Q4_K: dotQ4KGeneric,
		ggml.Q5_0: dotQ5_0Generic, ggml.Q5_K: dotQ5KGeneric, ggml.Q6_K: dotQ6KGeneric,
	}
	for typ, ref := range portable {
		kd := kinds[typ]
		for _, nb := range []int{1, 2, 3, 7, 33, 70} {
			k := nb * kd.blockSize
			w := randWeights(r, typ, 1, k)
			xq := make([]byte, nb*kd.actBytes)
			kd.quantize(randF32(r, k), xq)
			want := ref(w, xq, nb)
			require.InDelta(t, want, kd.dotQ(w, xq, nb), 2e-5*math.Abs(float64(want))+1e-3, "%s nb=%d", typ, nb)
		}
	}
}

// TestDequantF16AllHalves: the f16 tile conversion matches ggml for every
// non-NaN half, at odd lengths too.
func TestDequantF16AllHalves(t *testing.T) {
	var src []byte
	for h := 0; h < 1<<16; h++ {
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			continue // NaN
		}
		src = append(src, byte(h), byte(h>>8))
	}
	for _, n := range []int{len(src) / 2, 33, 31} {
		got := make([]float32, n)
		want := make([]float32, n)
		dequantRow(kinds[ggml.F16], src[:2*n], got)
		require.NoError(t, ggml.Dequantize(ggml.F16, src[:2*n], want))
		for i := range got {
			require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "n=%d i=%d", n, i)
		}
	}
}
