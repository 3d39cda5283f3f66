package cpu

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

type sampleParams struct {
	topK                              int
	topP, minP, temp, rep, pres, freq float32
	seed, step                        uint64
	bias                              map[int32]float32
}

// settings are sp as the kernel's step data, encoded.
func (sp sampleParams) settings(logprobs bool, top int) []int32 {
	st := plan.SampleSettings{TopK: sp.topK, TopP: sp.topP, MinP: sp.minP, Temp: sp.temp, Repeat: sp.rep,
		Presence: sp.pres, Frequency: sp.freq, Seed: sp.seed, Logprobs: logprobs, Top: top}
	for id, v := range sp.bias {
		st.BiasIDs, st.Bias = append(st.BiasIDs, id), append(st.Bias, v)
	}
	w := make([]uint32, plan.SampleSettingsWords)
	st.Encode(w)
	out := make([]int32, len(w))
	for i, v := range w {
		out[i] = int32(v)
	}
	return out
}

// countsOf is the kernel's counts layout for the in-range ids of hist.
func countsOf(hist []int32, n int) []int32 {
	c := make([]int32, 2*n+1)
	for _, id := range hist {
		plan.CountSampled(c, n, id)
	}
	return c
}

// refSample is the contract written plainly: penalties, temperature, a
// full sort, top-k, softmax, top-p, min-p, inverse-CDF draw (in the sorted
// order, or in index order when nothing truncates).
func refSample(x []float32, hist []int32, sp sampleParams) int32 {
	n := len(x)
	l := make([]float32, n)
	for i, v := range x {
		if v != v {
			v = float32(math.Inf(-1))
		}
		l[i] = v
	}
	for id, b := range sp.bias {
		l[id] += b
	}
	counts := map[int32]int{}
	for _, id := range hist {
		if id >= 0 && int(id) < n {
			counts[id]++
		}
	}
	if sp.rep != 0 && sp.rep != 1 || sp.pres != 0 || sp.freq != 0 {
		for id, c := range counts {
			v := l[id]
			if sp.rep != 0 && sp.rep != 1 {
				if v > 0 {
					v /= sp.rep
				} else {
					v *= sp.rep
				}
			}
			l[id] = v - (sp.pres + float32(c)*sp.freq)
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return l[order[a]] > l[order[b]] })
	if sp.temp <= 0 {
		return int32(order[0])
	}
	for i := range l {
		l[i] /= sp.temp
	}
	sort.SliceStable(order, func(a, b int) bool { return l[order[a]] > l[order[b]] })
	if sp.topK > 0 && sp.topK < n {
		order = order[:sp.topK]
	}
	lmax := l[order[0]]
	e := make([]float64, len(order))
	var z float64
	for i, id := range order {
		e[i] = math.Exp(float64(l[id] - lmax))
		z += e[i]
	}
	noCut := len(order) == n && sp.topP >= 1 && sp.minP <= 0
	if len(order) == n {
		// the whole-vocabulary normaliser is summed in id order
		z = 0
		for _, v := range l {
			z += math.Exp(float64(v - lmax))
		}
	}
	keep := len(order)
	if sp.topP < 1 {
		var cum float64
		for i := range e {
			cum += e[i]
			if cum >= float64(sp.topP)*z {
				keep = i + 1
				break
			}
		}
	}
	if sp.minP > 0 {
		for i := 1; i < keep; i++ {
			if e[i] < float64(sp.minP)*e[0] {
				keep = i
				break
			}
		}
	}
	if noCut {
		// nothing truncates: the draw walks the tokens in index order
		u := float64(plan.Uniform(sp.seed, sp.step)) * z
		var cum float64
		for i, v := range l {
			cum += math.Exp(float64(v - lmax))
			if cum > u {
				return int32(i)
			}
		}
		return int32(n - 1)
	}
	var mass float64
	for _, v := range e[:keep] {
		mass += v
	}
	u := float64(plan.Uniform(sp.seed, sp.step)) * mass
	var cum float64
	for i, v := range e[:keep] {
		cum += v
		if cum > u {
			return int32(order[i])
		}
	}
	return int32(order[keep-1])
}

// sampleOnce runs the Sample kernel through a plan with the step patched
// from VarStep, so the plan path is part of the test; the token counts of
// hist must gain the drawn token.
func sampleOnce(t *testing.T, x []float32, hist []int32, sp sampleParams) int32 {
	tok, _ := sampleExec(t, x, hist, sp)
	return tok
}

// sampleExec is sampleOnce that also returns the executor it ran on.
func sampleExec(t *testing.T, x []float32, hist []int32, sp sampleParams) (int32, *Exec) {
	n := len(x)
	h := newHarness(t)
	xb := h.f32("x", x)
	ob := h.i32("out", []int32{-1, -9})
	counts := countsOf(hist, n)
	cb := h.i32("counts", append([]int32{12345}, counts...)) // the counts start at 4 bytes
	sb := h.nan("scratch", 2*n)
	d := plan.SampleArgs{Draws: plan.None, X: bind(xb), Out: bind(ob), Settings: bind(h.i32("settings", sp.settings(false, 0))),
		Counts: plan.Binding{Buf: cb, Off: 4}, Scratch: bind(sb), Logprobs: plan.None, N: n}.Dispatch()
	d.AddPatch(plan.PatchSampleStep, plan.VarStep, 1, 0)
	h.add(d)
	h.run(plan.Vars{plan.VarStep: int64(sp.step)})
	require.Equal(t, ggml.F32Bytes(x), h.read(xb), "logits must be left unchanged")
	out := h.readI32(ob)
	require.Equal(t, int32(-9), out[1], "only one id is written")
	tok := out[0]
	want := countsOf(append(append([]int32(nil), hist...), tok), n)
	require.Equal(t, append([]int32{12345}, want...), h.readI32(cb), "the drawn token is counted")
	return tok, h.ex
}

func TestSampleMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 39))
	trials := 400
	if testing.Short() {
		trials = 100
	}
	pick := func(v ...float32) float32 { return v[r.IntN(len(v))] }
	for trial := 0; trial < trials; trial++ {
		n := []int{7, 50, 1000, 4099}[r.IntN(4)]
		if trial%50 == 0 {
			n = 51865
		}
		scale := []float64{0.3, 2, 8}[r.IntN(3)]
		x := randVec(r, n, scale)
		if r.IntN(3) == 0 { // coarse logits: many ties
			for i := range x {
				x[i] = float32(math.Round(float64(x[i])))
			}
		}
		if r.IntN(5) == 0 {
			x[r.IntN(n)] = float32(math.NaN())
			x[r.IntN(n)] = float32(math.Inf(-1))
		}
		var hist []int32
		if r.IntN(3) > 0 {
			hist = make([]int32, r.IntN(24))
			for i := range hist {
				hist[i] = int32(r.IntN(min(n, 30)))
			}
			if len(hist) > 2 {
				hist[0], hist[1] = -1, int32(n+5) // ignored
			}
		}
		sp := sampleParams{
			topK: []int{0, 1, 5, 40, n + 3}[r.IntN(5)],
			topP: pick(1, 0.95, 0.5, 0), minP: pick(0, 0.05, 0.3),
			temp: pick(0, 0.7, 1, 1.6), rep: pick(0, 1, 1.3), pres: pick(0, 0.5), freq: pick(0, 0.25),
			seed: r.Uint64(), step: uint64(r.IntN(1000)),
		}
		if r.IntN(4) == 0 {
			sp.bias = map[int32]float32{int32(r.IntN(n)): 100, int32(r.IntN(n)): -100, int32(r.IntN(n)): float32(r.NormFloat64())}
		}
		want := refSample(x, hist, sp)
		got := sampleOnce(t, x, hist, sp)
		require.Equal(t, want, got, "trial %d: n=%d params %+v", trial, n, sp)
	}
}

// TestSampleDistribution draws many tokens from a fixed distribution and
// checks the frequencies follow the softmax (with top-p cutting the tail).
func TestSampleDistribution(t *testing.T) {
	x := []float32{2, 1, 0.5, 0, -1, -3}
	// expected: softmax, keep the prefix reaching 0.9, renormalise
	e := make([]float64, len(x))
	var z float64
	for i, v := range x {
		e[i] = math.Exp(float64(v - 2))
		z += e[i]
	}
	keep, cum := 0, 0.0
	for keep < len(e) {
		cum += e[keep]
		keep++
		if cum >= 0.9*z {
			break
		}
	}
	h := newHarness(t)
	xb, ob, sb := h.f32("x", x), h.i32("out", []int32{0}), h.nan("s", 12)
	st := sampleParams{topP: 0.9, temp: 1, seed: 7}.settings(false, 0)
	d := plan.SampleArgs{Draws: plan.None, X: bind(xb), Out: bind(ob), Settings: bind(h.i32("settings", st)), Counts: plan.None, Scratch: bind(sb), Logprobs: plan.None, N: 6}.Dispatch()
	d.AddPatch(plan.PatchSampleStep, plan.VarStep, 1, 0)
	h.add(d)
	h.load()
	const draws = 20000
	counts := make([]int, len(x))
	for s := 0; s < draws; s++ {
		require.NoError(t, h.ex.Run(0, &plan.Vars{plan.VarStep: int64(s)}))
		counts[h.readI32(ob)[0]]++
	}
	for i := range x {
		want := 0.0
		if i < keep {
			want = e[i] / cum
		}
		require.InDelta(t, want, float64(counts[i])/draws, 0.015, "token %d", i)
	}
}

// TestSampleTopPBoundary: with four equal logits each holds exactly a
// quarter of the mass, so top-p 0.5 is reached by the first two tokens
// ("reaches" means >=) and the others must never be drawn.
func TestSampleTopPBoundary(t *testing.T) {
	x := []float32{1, 1, 1, 1}
	seen := map[int32]int{}
	for step := uint64(0); step < 64; step++ {
		seen[sampleOnce(t, x, nil, sampleParams{topP: 0.5, temp: 1, seed: 3, step: step})]++
	}
	require.Len(t, seen, 2)
	require.Positive(t, seen[0])
	require.Positive(t, seen[1])
}

func TestSampleDegenerateLogits(t *testing.T) {
	inf := float32(math.Inf(1))
	sp := sampleParams{topP: 0.9, temp: 1, seed: 1}
	require.Equal(t, int32(0), sampleOnce(t, []float32{-inf, -inf, -inf}, nil, sp))
	require.Equal(t, int32(2), sampleOnce(t, []float32{1, 5, inf, inf}, nil, sp))
	require.Equal(t, int32(1), sampleOnce(t, []float32{float32(math.NaN()), 0, -1}, nil, sampleParams{temp: 0}))
}

// TestSampleLogprobs: the logprobs record holds the drawn token's
// log-softmax of the raw logits (bias and penalties do not change it) and
// the top ids by descending raw logit, ties to the lower id, as a float64
// reference computes them.
func TestSampleLogprobs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial, n := range []int{5, 300, 4099, 51865} {
		x := randVec(r, n, 3)
		for i := range x {
			if i%7 == 0 {
				x[i] = float32(math.Round(float64(x[i]))) // ties
			}
		}
		x[r.IntN(n)] = float32(math.NaN())
		top := []int{0, 3, 20, 20}[trial]
		sp := sampleParams{topK: 40, temp: 0.8, rep: 1.3, seed: uint64(trial), bias: map[int32]float32{int32(r.IntN(n)): 5}}
		h := newHarness(t)
		xb, ob, sb := h.f32("x", x), h.i32("out", []int32{-1}), h.nan("s", 2*n)
		lb := h.f32("lp", nans(plan.SampleLogprobWords))
		h.add(plan.SampleArgs{Draws: plan.None, X: bind(xb), Out: bind(ob), Settings: bind(h.i32("settings", sp.settings(true, top))),
			Counts: bind(h.i32("counts", countsOf([]int32{1, 2, 2}, n))), Scratch: bind(sb), Logprobs: bind(lb), N: n}.Dispatch())
		h.run(plan.Vars{})
		tok := h.readI32(ob)[0]
		lp := h.readF32(lb)

		lmax := math.Inf(-1)
		for _, v := range x {
			if v == v {
				lmax = max(lmax, float64(v))
			}
		}
		var z float64
		for _, v := range x {
			if v == v {
				z += math.Exp(float64(v) - lmax)
			}
		}
		lse := lmax + math.Log(z)
		order := make([]int, 0, n)
		for i, v := range x {
			if v == v {
				order = append(order, i)
			}
		}
		sort.SliceStable(order, func(a, b int) bool { return x[order[a]] > x[order[b]] })
		require.InDelta(t, float64(x[tok])-lse, lp[0], 1e-5, "n %d: the drawn token", n)
		for j := range top {
			require.Equal(t, int32(order[j]), int32(math.Float32bits(lp[1+2*j])), "n %d: top %d", n, j)
			require.InDelta(t, float64(x[order[j]])-lse, lp[2+2*j], 1e-5, "n %d: top %d", n, j)
		}
		for _, v := range lp[1+2*top:] {
			require.Zero(t, v, "n %d: unused pairs are cleared", n)
		}
	}
}

// A Sample dispatch with draws bound refuses a draw whose slot or logits
// row is outside the dispatch, or a slot drawn twice (its counts would
// depend on the order), and makes the valid draws into their slots.
func TestSampleDrawsChecked(t *testing.T) {
	const n, slots, rows = 9, 3, 2
	x := []float32{0, 1, 9, 2, 3, 4, 5, 6, 7, 8, 7, 6, 5, 4, 3, 2, 1, 0}
	greedy := sampleParams{temp: 0}.settings(false, 0)
	var sw []int32
	for range slots {
		sw = append(sw, greedy...)
	}
	for _, c := range []struct {
		draws [][3]int32
		err   string
	}{
		{[][3]int32{{2, 0, 0}, {0, 1, 0}}, ""},
		{[][3]int32{{3, 0, 0}}, "slot 3 of 3"},
		{[][3]int32{{-1, 0, 0}}, "slot -1 of 3"},
		{[][3]int32{{0, 2, 0}}, "logits row 2 of 2"},
		{[][3]int32{{1, 0, 0}, {1, 1, 0}}, "slot 1 drawn twice"},
	} {
		var dw []int32
		for _, d := range c.draws {
			dw = append(dw, d[:]...)
		}
		h := newHarness(t)
		ob := h.i32("out", []int32{-1, -1, -1})
		d := plan.SampleArgs{X: bind(h.f32("x", x)), Out: bind(ob), Settings: bind(h.i32("settings", sw)),
			Counts: plan.None, Scratch: bind(h.nan("scratch", len(c.draws)*2*n)), Logprobs: plan.None,
			Draws: bind(h.i32("draws", dw)), N: n, M: len(c.draws), Ldx: n, Slots: slots, XRows: rows}.Dispatch()
		h.add(d)
		h.load()
		err := h.ex.Run(0, &plan.Vars{})
		if c.err != "" {
			require.ErrorContains(t, err, c.err, "draws %v", c.draws)
			require.Equal(t, []int32{-1, -1, -1}, h.readI32(ob), "draws %v: nothing drawn", c.draws)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, []int32{0, -1, 2}, h.readI32(ob), "row 1's argmax (token 0) into slot 0, row 0's (token 2) into slot 2")
	}
}
