package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
)

// untruncatedMasses are x's scaled logits and their fixed-point masses
// (NaN as -Inf, over temp), as the kernels compute them.
func untruncatedMasses(x []float32, temp float32) ([]float32, []uint64) {
	l := make([]float32, len(x))
	lmax := float32(math.Inf(-1))
	for i, v := range x {
		if v != v {
			v = float32(math.Inf(-1))
		}
		l[i] = v / temp
		lmax = max(lmax, l[i])
	}
	ev := make([]uint64, len(x))
	for i, v := range l {
		ev[i] = plan.SampleExpFx(v - lmax)
	}
	return l, ev
}

// walkTo is the first of ids whose cumulative mass exceeds the draw's
// target, the uniform number of the whole mass.
func walkTo(ids []int32, ev []uint64, seed, step uint64) int32 {
	var z uint64
	for _, m := range ev {
		z += m
	}
	target := plan.SampleMul24(z, plan.Uniform24(seed, step))
	var cum uint64
	for _, id := range ids {
		cum += ev[id]
		if cum > target {
			return id
		}
	}
	return ids[len(ids)-1]
}

// TestSampleUntruncatedIndexOrder: when nothing truncates (every "off"
// encoding of top-k, top-p and min-p) the draw is exactly the first token
// in index order whose cumulative fixed-point mass exceeds
// SampleMul24(z, u·2^24), sorting nothing and reading at most one chunk of
// masses serially; the sorted order's walk with the same masses picks
// another token in many of these draws, so the test tells the orders
// apart. A min-p, even one that cuts nothing, truncates by its settings: that
// draw stays the sorted one (refSample).
func TestSampleUntruncatedIndexOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 44))
	nan := float32(math.NaN())
	type dist struct {
		name string
		gen  func(n int) []float32
	}
	dists := []dist{
		{"flat N(0,0.3)", func(n int) []float32 { return randVec(r, n, 0.3) }},
		{"N(0,3)", func(n int) []float32 { return randVec(r, n, 3) }},
		{"-Inf and NaN", func(n int) []float32 { return withHoles(r, randVec(r, n, 1), 6) }},
	}
	// the "off" encodings: top-p 1, above 1 or NaN; min-p 0 or below;
	// top-k 0, or (offs[1], set per size) n or more
	offs := []sampleParams{{topP: 1}, {topP: 1}, {topP: nan}, {topP: 1.5}, {topP: 1, minP: -0.5}}
	differ, draws := 0, 0
	for _, n := range []int{7, 1000, 4097, 49152, 49157} {
		for _, d := range dists {
			x := d.gen(n)
			offs[1].topK = n + []int{0, 3}[r.IntN(2)]
			for oi, sp := range offs {
				t.Run(fmt.Sprintf("n=%d/%s/%d", n, d.name, oi), func(t *testing.T) {
					sp.temp = []float32{0.7, 1, 1.6}[r.IntN(3)]
					l, ev := untruncatedMasses(x, sp.temp)
					byIndex := make([]int32, n)
					for i := range byIndex {
						byIndex[i] = int32(i)
					}
					sorted := append([]int32(nil), byIndex...)
					sort.SliceStable(sorted, func(a, b int) bool { return l[sorted[a]] > l[sorted[b]] })
					for range 4 {
						sp.seed, sp.step = r.Uint64(), uint64(r.IntN(1000))
						want := walkTo(byIndex, ev, sp.seed, sp.step)
						got, ex := sampleExec(t, x, nil, sp)
						require.Equal(t, want, got, "params %+v", sp)
						require.Zero(t, ex.order.sorted, "no sort")
						require.Equal(t, n, ex.order.exps, "one exponential a token")
						require.LessOrEqual(t, ex.order.walked, massGrain, "one chunk walked token by token")
						if walkTo(sorted, ev, sp.seed, sp.step) != want {
							differ++
						}
						draws++
					}
				})
			}
			t.Run(fmt.Sprintf("n=%d/%s/min-p set", n, d.name), func(t *testing.T) {
				sp := sampleParams{topP: 1, minP: 1e-30, temp: 1, seed: r.Uint64(), step: 3}
				got, ex := sampleExec(t, x, nil, sp)
				require.Equal(t, refSample(x, nil, sp), got)
				require.Positive(t, ex.order.sorted, "the sorted walk")
			})
		}
	}
	require.Greater(t, differ, draws/4, "the sorted order's walk differs in %d of %d draws", differ, draws)
}

// TestSampleUntruncatedDistribution: the index-order draw samples the
// softmax itself. 20,000 draws (steps of one seed) over eight tokens whose
// logits are not in index order, against the exact probabilities by
// Pearson's chi-square: 7 degrees of freedom, 24.32 the 0.1% point.
func TestSampleUntruncatedDistribution(t *testing.T) {
	x := []float32{-1, 2, 0.5, 1, -3, 0, 1.5, 2.5}
	const temp, draws = 1.2, 20000
	p := make([]float64, len(x))
	var z float64
	for i, v := range x {
		p[i] = math.Exp(float64(v / temp))
		z += p[i]
	}
	h := newHarness(t)
	xb, ob, sb := h.f32("x", x), h.i32("out", []int32{0}), h.nan("s", 2*len(x))
	st := sampleParams{topP: 1, temp: temp, seed: 11}.settings(false, 0)
	d := plan.SampleArgs{Draws: plan.None, X: bind(xb), Out: bind(ob), Settings: bind(h.i32("settings", st)), Counts: plan.None,
		Scratch: bind(sb), Logprobs: plan.None, N: len(x)}.Dispatch()
	d.AddPatch(plan.PatchSampleStep, plan.VarStep, 1, 0)
	h.add(d)
	h.load()
	counts := make([]int, len(x))
	for s := range draws {
		require.NoError(t, h.ex.Run(0, &plan.Vars{plan.VarStep: int64(s)}))
		counts[h.readI32(ob)[0]]++
	}
	require.Zero(t, h.ex.order.sorted, "the untruncated path")
	var chi2 float64
	for i, c := range counts {
		e := p[i] / z * draws
		chi2 += (float64(c) - e) * (float64(c) - e) / e
	}
	require.Less(t, chi2, 24.32, "counts %v", counts)
}
