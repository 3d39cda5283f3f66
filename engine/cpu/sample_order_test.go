package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
)

// TestSampleNoTopKMatchesFullSort: without top-k, with a cut, the sampler
// walks the order through histograms and sorts only where the cut and the
// draw land (with no cut at all, what OpenAI requests carry, it walks
// index order and sorts nothing); its tokens must be the float64
// full-sort reference's (refSample) over many seeds and distributions,
// and on distributions without long runs of equal logits it must sort at
// most sampleSortCap tokens per walk (the old path sorted every token
// above the draw's reach: much of a flat vocabulary) and compute each
// token's mass once (the walks used to compute them again).
func TestSampleNoTopKMatchesFullSort(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 1))
	type dist struct {
		name string
		ties bool // long runs of equal logits (may sort more)
		gen  func(n int) []float32
	}
	dists := []dist{
		{"flat N(0,0.1)", false, func(n int) []float32 { return randVec(r, n, 0.1) }},
		{"N(0,3)", false, func(n int) []float32 { return randVec(r, n, 3) }},
		{"peaked", false, func(n int) []float32 {
			x := randVec(r, n, 2)
			for range 5 {
				x[r.IntN(n)] = float32(8 + 4*r.Float64())
			}
			return x
		}},
		{"plateaus", true, func(n int) []float32 {
			x := randVec(r, n, 1)
			for i := range x {
				x[i] = float32(math.Round(float64(x[i])*2) / 2)
			}
			return x
		}},
		{"-Inf and NaN", false, func(n int) []float32 { return withHoles(r, randVec(r, n, 0.5), 5) }},
		{"one far outlier", false, func(n int) []float32 {
			x := randVec(r, n, 0.2)
			x[r.IntN(n)] = -1e30 // the finite range is huge: refinement from one bin
			return x
		}},
	}
	sizes := []int{49152, 152064, 1031}
	if testing.Short() {
		sizes = []int{49152, 1031}
	}
	cuts := []sampleParams{
		{topP: 1, temp: 0.7},
		{topP: 0.95, temp: 0.7},
		{topP: 0.5, temp: 1.3},
		{topP: 1, minP: 0.05, temp: 1},
		{topP: 0.9, minP: 0.2, temp: 0.7},
		{topK: 40, topP: 0.95, temp: 0.7},
		{topK: 5000, topP: 1, temp: 1e-4}, // the general path with top-k
	}
	for _, n := range sizes {
		for _, d := range dists {
			x := d.gen(n)
			for ci, sp := range cuts {
				t.Run(fmt.Sprintf("n=%d/%s/%d", n, d.name, ci), func(t *testing.T) {
					for range 3 {
						sp.seed, sp.step = r.Uint64(), uint64(r.IntN(1000))
						want := refSample(x, nil, sp)
						got, ex := sampleExec(t, x, nil, sp)
						require.Equal(t, want, got, "params %+v", sp)
						if sp.topK == 0 && !d.ties {
							require.LessOrEqual(t, ex.order.sorted, 2*sampleSortCap, "tokens sorted")
						}
						if sp.topK == 0 {
							require.Equal(t, n, ex.order.exps, "one exponential a token, shared by the walks")
						}
						if sp.topK == 0 && sp.topP >= 1 && sp.minP == 0 {
							require.Zero(t, ex.order.sorted, "nothing truncates: index order, no sort")
						}
					}
				})
			}
		}
	}
}

// withHoles sets about one in k of x's logits to -Inf and as many to NaN.
func withHoles(r *rand.Rand, x []float32, k int) []float32 {
	for i := range x {
		switch r.IntN(k) {
		case 0:
			x[i] = float32(math.Inf(-1))
		case 1:
			x[i] = float32(math.NaN())
		}
	}
	return x
}

// TestSampleLongTieRun: a run of equal logits longer than sampleSortCap
// where the draw lands is walked in id order; every token of it must come
// out as the reference says, the cut inside it too.
func TestSampleLongTieRun(t *testing.T) {
	n := 5000
	x := make([]float32, n)
	for i := range x {
		x[i] = -3
		if i%3 == 0 {
			x[i] = 1 // 1667 tokens of one logit, in id order
		}
	}
	x[4321] = 2
	for step := range uint64(40) {
		for _, sp := range []sampleParams{{topP: 1, temp: 1}, {topP: 0.6, temp: 1}, {topP: 1, minP: 0.5, temp: 0.8}} {
			sp.seed, sp.step = 9, step
			require.Equal(t, refSample(x, nil, sp), sampleOnce(t, x, nil, sp), "step %d params %+v", step, sp)
		}
	}
}

// TestSampleNoTopKKernelMasses: without top-k the masses, the cut's target
// and the draw's are the MSL kernel's fixed-point integers, so the CPU
// keeps what the kernel keeps even where float64 would decide otherwise.
// Two tokens, logits 0 and d, with a top-p whose fixed-point target
// (plan.SampleFrac: floor of topP·z, topP to 32 bits) is exactly the top
// token's mass: the kernel cuts after it, so every draw is token 0; in
// float64, topP·(1+exp(d)) lies just above 1, which kept both tokens and
// drew token 1 whenever u > 1/(1+exp(d)) ≈ 0.55.
func TestSampleNoTopKKernelMasses(t *testing.T) {
	d := math.Float32frombits(0xbe529043)    // -0.20562844
	topP := math.Float32frombits(0x3f0d1d32) // 0.55122674
	z := plan.SampleFxOne + plan.SampleExpFx(d)
	require.Equal(t, plan.SampleFxOne, plan.SampleFrac(z, topP), "the kernel's cut target is the top token's mass")
	require.Greater(t, float64(topP)*(1+math.Exp(float64(d))), 1.0, "float64 puts the cut past the top token")
	x := []float32{0, d}
	high := 0
	for step := range uint64(64) {
		sp := sampleParams{topP: topP, temp: 1, seed: 5, step: step}
		if float64(plan.Uniform(sp.seed, sp.step))*(1+math.Exp(float64(d))) >= 1 {
			high++ // float64 drew token 1 here
		}
		require.Equal(t, int32(0), sampleOnce(t, x, nil, sp), "step %d", step)
	}
	require.Positive(t, high, "some draws must be where float64 took token 1")
}

// TestSampleNoTopKPooled: without top-k the draw's passes over the
// vocabulary (the temperature pass with its extremes, the masses with the
// histogram, the total mass and min-p's count, or with each chunk's sum
// when nothing truncates) run across the pool, each
// token once, each worker taking its share (a pool of 2 gives worker 1
// the second chunk before any is claimed), every token's mass is the
// kernel's, and the token is the reference's.
func TestSampleNoTopKPooled(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 7))
	n := 49152
	x := randVec(r, n, 0.3)
	x[77] = float32(math.NaN())
	for _, sp := range []sampleParams{{topP: 1, temp: 0.7}, {topP: 0.95, minP: 0.05, temp: 0.7}} {
		for step := range uint64(3) {
			sp.seed, sp.step = 12, step
			h := newHarness(t)
			h.be = New(Options{Threads: 2})
			xb, ob, sb := h.f32("x", x), h.i32("out", []int32{-1}), h.nan("scratch", 2*n)
			d := plan.SampleArgs{Draws: plan.None, X: bind(xb), Out: bind(ob), Settings: bind(h.i32("settings", sp.settings(false, 0))),
				Counts: plan.None, Scratch: bind(sb), Logprobs: plan.None, N: n}.Dispatch()
			d.AddPatch(plan.PatchSampleStep, plan.VarStep, 1, 0)
			h.add(d)
			h.run(plan.Vars{plan.VarStep: int64(sp.step)})
			require.Equal(t, refSample(x, nil, sp), h.readI32(ob)[0], "params %+v", sp)
			ex := h.ex
			require.Len(t, ex.scaled.parts, 2)
			require.Len(t, ex.order.parts, 2)
			for w := range 2 {
				require.Positive(t, ex.scaled.parts[w].did, "worker %d's share of the temperature pass", w)
				require.Positive(t, ex.order.parts[w].did, "worker %d's share of the masses", w)
			}
			require.Equal(t, n, ex.scaled.parts[0].did+ex.scaled.parts[1].did, "each token scaled once")
			require.Equal(t, n, ex.order.parts[0].did+ex.order.parts[1].did, "each token's mass once")
			// every mass is the kernel's, the lanes the assembly left to
			// the scalar path included
			l := h.readF32(sb)[:n] // the scaled logits
			lmax := slices.Max(l)
			for i, e := range ex.order.ev[:n] {
				if want := plan.SampleExpFx(l[i] - lmax); e != want {
					require.Equal(t, want, e, "token %d's mass", i)
				}
			}
		}
	}
}
