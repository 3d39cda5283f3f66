package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScanGE: the vector scan finds the first block with an element >= thr at
// every length, never a NaN, as the portable loop does.
func TestScanGE(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 2000 {
		n := 32 * r.IntN(8)
		x := randVec(r, n, 1)
		for i := range x {
			if r.IntN(10) == 0 {
				x[i] = float32(math.NaN())
			}
		}
		thr := float32(r.NormFloat64() + 2)
		if trial%3 == 0 {
			thr = float32(math.Inf(-1))
		}
		off, mask := n, uint32(0)
		for b := 0; b < n && mask == 0; b += 32 {
			for i, v := range x[b : b+32] {
				if !math.IsNaN(float64(v)) && v >= thr {
					off, mask = b, mask|1<<i
				}
			}
		}
		gotOff, gotMask := scanGE(x, thr)
		require.Equal(t, off, gotOff, "trial %d", trial)
		require.Equal(t, mask, gotMask, "trial %d", trial)
		gotOff, gotMask = scanGEGeneric(x, thr)
		require.Equal(t, off, gotOff)
		require.Equal(t, mask, gotMask)
	}
}
