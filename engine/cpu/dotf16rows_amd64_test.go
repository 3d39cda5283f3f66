package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
)

// dotF16RowsFast gives each row dotF16Fast's sum bit for bit (before the
// single dot became the kernel's one-row case, the old dotF16AVX2's; odd lengths,
// tails past the last 32, one row and odd row counts, rows further apart
// than their length), and within float32 rounding of a float64 dot.
func TestDotF16RowsMatchesDot(t *testing.T) {
	require.True(t, hasAVX2, "the f16 row kernel needs AVX2 and FMA")
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{1, 31, 32, 33, 64, 95, 384, 400, 1536} {
		for _, rows := range []int{1, 2, 3, 5, 8, 127, 128} {
			for _, gap := range []int{0, 6} {
				rb := 2*n + gap
				w := make([]byte, rows*rb)
				for j := range rows {
					for i := range n {
						h := ggml.FP32ToFP16(float32(r.NormFloat64()))
						w[j*rb+2*i], w[j*rb+2*i+1] = byte(h), byte(h>>8)
					}
				}
				x := randF32(r, n)
				out := make([]float32, rows)
				dotF16RowsFast(w, rb, x, out)
				for j := range rows {
					wr := w[j*rb : j*rb+2*n]
					want := dotF16Fast(wr, x)
					require.Equal(t, math.Float32bits(want), math.Float32bits(out[j]), "n %d rows %d gap %d row %d", n, rows, gap, j)
					var ref float64
					for i := range n {
						ref += float64(f16At(wr[2*i:])) * float64(x[i])
					}
					require.InDelta(t, ref, float64(out[j]), 1e-5*float64(n), "n %d row %d: float64 reference", n, j)
				}
			}
		}
	}
}

// An f16 product through the row path (fewer than 16 activation rows)
// is the same bit for bit with the row kernel on and off.
func TestMulF16RowsOnOff(t *testing.T) {
	pool := NewPool(2)
	defer pool.Close()
	mm := NewMatMul(pool)
	r := rand.New(rand.NewPCG(11, 12))
	for _, s := range [][3]int{{51864, 384, 1}, {1536, 384, 5}, {333, 96, 3}, {7, 33, 2}} {
		n, k, m := s[0], s[1], s[2]
		t.Run(fmt.Sprint(n, "x", k, "x", m), func(t *testing.T) {
			w := randWeights(r, ggml.F16, n, k)
			x := randF32(r, m*k)
			bias := randF32(r, n)
			on := make([]float32, m*n)
			off := make([]float32, m*n)
			require.NoError(t, mm.Mul(ggml.F16, w, n, k, m, x, k, on, n, bias, nil, 0))
			kd := kinds[ggml.F16]
			saved := kd.dotFRows
			kd.dotFRows = nil
			err := mm.Mul(ggml.F16, w, n, k, m, x, k, off, n, bias, nil, 0)
			kd.dotFRows = saved
			require.NoError(t, err)
			for i := range on {
				require.Equal(t, math.Float32bits(off[i]), math.Float32bits(on[i]), "element %d", i)
			}
		})
	}
}
