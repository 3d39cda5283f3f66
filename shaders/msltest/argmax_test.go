package msltest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
)

// Argmax: exact index equality with the CPU over rows with ties (the
// lowest index wins, also across first-stage segments), NaNs (never win;
// an all-NaN row gives 0), ±Inf, and sizes around the segment length.
func TestArgmaxKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, c := range []struct {
		n, m, ld int
		fill     func(row []float32, t int)
	}{
		{1, 1, 1, nil},
		{33, 3, 40, nil},
		{4096, 2, 4096, nil},
		{4097, 2, 4100, nil},
		{32000, 3, 32000, nil},
		// the maximum repeated in two segments: the first one wins
		{10000, 2, 10000, func(row []float32, t int) { row[9000], row[5000+t] = 50, 50 }},
		// equal everywhere: index 0
		{5000, 1, 5000, func(row []float32, _ int) {
			for i := range row {
				row[i] = 1
			}
		}},
		// NaNs everywhere but one, and all NaN
		{300, 2, 300, func(row []float32, t int) {
			for i := range row {
				row[i] = nan
			}
			if t == 0 {
				row[123] = -5
			}
		}},
		// +Inf ties, NaN before them
		{9000, 1, 9000, func(row []float32, _ int) { row[10], row[8000], row[8500] = nan, inf, inf }},
		{6000, 1, 6000, func(row []float32, _ int) {
			for i := range row {
				row[i] = float32(math.Inf(-1))
			}
		}},
	} {
		x := kitRand(r, (c.m-1)*c.ld+c.n, 3)
		if c.fill != nil {
			for t := 0; t < c.m; t++ {
				c.fill(x[t*c.ld:t*c.ld+c.n], t)
			}
		}
		out := make([]int32, c.m+1)
		for i := range out {
			out[i] = -7
		}
		d := plan.ArgmaxArgs{N: int(c.n), M: int(c.m), Ldx: int(c.ld)}.Dispatch()
		ref, got := kitRun(t, d, [][]byte{kitF32(x), kitI32(out)})
		require.Equal(t, kitAsI32(ref[1]), kitAsI32(got[1]), "argmax n=%d m=%d", c.n, c.m)
	}
}
