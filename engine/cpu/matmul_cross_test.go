package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/stretchr/testify/require"
)

// TestAgainstGGMLPackage checks the kernels used here against package
// ggml's reference: activation bytes, dequantized tiles bit for bit, and
// block dots (SIMD where present) against ggml.VecDot.
func TestAgainstGGMLPackage(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	for _, typ := range allTypes {
		kd := kinds[typ]
		for _, nb := range []int{1, 3, 8} {
			k := nb * max(kd.blockSize, 32)
			w := randWeights(r, typ, 1, k)
			x := randF32(r, k)
			got := make([]float32, k)
			want := make([]float32, k)
			dequantRow(kd, w, got)
			require.NoError(t, ggml.Dequantize(typ, w, want))
			for i := range got {
				require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "%s dequant [%d]", typ, i)
			}
			if kd.id != kindQuant {
				continue
			}
			xq := make([]byte, k/kd.blockSize*kd.actBytes)
			kd.quantize(x, xq)
			ref := make([]byte, len(xq))
			require.NoError(t, ggml.QuantizeActivation(typ, x, ref))
			require.Equal(t, ref, xq, "%s activation", typ)
			wantDot, err := ggml.VecDot(typ, k, w, xq)
			require.NoError(t, err)
			gotDot := kd.dotQ(w, xq, k/kd.blockSize)
			require.InDelta(t, wantDot, gotDot, 3e-5*math.Abs(float64(wantDot))+1e-4, "%s dot nb=%d", typ, nb)
		}
	}
}
