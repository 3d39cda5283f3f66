package msltest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
)

// indexToken is the untruncated draw by its definition: over x's scaled
// logits (NaN as -Inf, over temp) the cumulative fixed-point masses in
// index order, the first that exceeds plan.SampleMul24 of their total.
func indexToken(x []float32, temp float32, seed uint64, step int) int32 {
	lmax := float32(math.Inf(-1))
	for _, v := range x {
		if v == v {
			lmax = max(lmax, v/temp)
		}
	}
	cum := make([]uint64, len(x))
	var c uint64
	for i, v := range x {
		if v == v {
			c += plan.SampleExpFx(v/temp - lmax)
		}
		cum[i] = c
	}
	target := plan.SampleMul24(c, plan.Uniform24(seed, uint64(step)))
	return int32(min(sort.Search(len(cum), func(i int) bool { return cum[i] > target }), len(x)-1))
}

// TestSampleUntruncated: when nothing truncates (top-k 0 or ≥ n; top-p 1,
// above 1 or NaN; min-p 0 or below: a chat request's settings) the kernel
// draws the first token in index order whose cumulative fixed-point mass
// exceeds u·z, exactly as the CPU: over one group and many (49,152 logits
// in 24 groups of 2,048, odd sizes), NaN and -Inf logits, and with bias,
// penalties and logprobs (against the CPU there).
func TestSampleUntruncated(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	nan := float32(math.NaN())
	holes := func(n int) []float32 {
		x := kitRand(r, n, 1)
		for i := range x {
			switch r.IntN(6) {
			case 0:
				x[i] = float32(math.Inf(-1))
			case 1:
				x[i] = nan
			}
		}
		x[r.IntN(n)] = 2 // at least one finite
		return x
	}
	hist := []int32{5, 9, 5, 2, 9, 5, 0, 11}
	draws := 0
	for _, v := range []struct {
		name string
		x    []float32
	}{
		{"seven", []float32{1, 2, 2, nan, -1, float32(math.Inf(-1)), 2}},
		{"flat1000", kitRand(r, 1000, 0.3)},
		{"holes4097", holes(4097)},
		{"flat49152", kitRand(r, 49152, 0.3)},
		{"peaked49157", kitRand(r, 49157, 3)},
	} {
		n := len(v.x)
		for pi, sp := range []sampleParams{
			{temp: 0.7, topP: 1, top: -1},
			{temp: 1, topK: n, topP: 1, top: -1},
			{temp: 1.3, topK: n + 5, topP: nan, minP: -1, top: -1},
			{temp: 0.9, topP: 1.5, top: -1},
			{temp: 0.7, topP: 1, rep: 1.2, pres: 0.3, hist: hist, bias: map[int32]float32{0: 3, 6: -100}, top: 4},
		} {
			exact := sp.hist == nil && sp.bias == nil
			for s := 0; s < 2; s++ {
				seed, step := r.Uint64(), 7*s+pi
				what := fmt.Sprintf("%s params %d", v.name, pi)
				got := runSample(t, v.x, sp, seed, step, what)
				if exact {
					require.Equal(t, indexToken(v.x, sp.temp, seed, step), got, "%s: the index-order draw", what)
				}
				draws++
			}
		}
	}
	t.Logf("sample: %d untruncated draws, all equal to the CPU's", draws)
}
