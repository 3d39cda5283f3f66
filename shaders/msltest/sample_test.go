package msltest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

type sampleParams struct {
	topK                  int
	topP, minP, temp, rep float32
	pres, freq            float32
	hist                  []int32 // counted tokens
	bias                  map[int32]float32
	top                   int // logprobs: -1 off, else the top count
}

// sampleInit is a Sample dispatch and its buffers: logits, out, the
// settings, the counts of sp.hist (ids outside [0, n) are dropped, as the
// host never writes them), scratch and a logprobs record.
func sampleInit(x []float32, sp sampleParams, seed uint64, step int) (plan.Dispatch, [][]byte) {
	n := len(x)
	st := plan.SampleSettings{TopK: sp.topK, TopP: sp.topP, MinP: sp.minP, Temp: sp.temp, Repeat: sp.rep,
		Presence: sp.pres, Frequency: sp.freq, Seed: seed, Logprobs: sp.top >= 0, Top: sp.top}
	for id := range int32(n) { // distinct ids, in id order
		if v, ok := sp.bias[id]; ok {
			st.BiasIDs, st.Bias = append(st.BiasIDs, id), append(st.Bias, v)
		}
	}
	w := make([]uint32, plan.SampleSettingsWords)
	st.Encode(w)
	sw := make([]int32, len(w))
	for i, v := range w {
		sw[i] = int32(v)
	}
	c := make([]int32, 2*n+1)
	for _, id := range sp.hist {
		plan.CountSampled(c, n, id)
	}
	d := plan.SampleArgs{Draws: plan.None, N: n, Step: step}.Dispatch()
	return d, [][]byte{kitF32(x), kitI32([]int32{-1}), kitI32(sw), kitI32(c), kitF32(kitNaNs(2 * n)),
		kitF32(kitNaNs(plan.SampleLogprobWords))}
}

// runSample draws with seed and step on both backends and requires the
// same token, the same counts after it and logprobs within float32
// rounding of the CPU's; x must be left unchanged.
func runSample(t *testing.T, x []float32, sp sampleParams, seed uint64, step int, what string) int32 {
	t.Helper()
	d, init := sampleInit(x, sp, seed, step)
	ref, got := kitRun(t, d, init)
	require.Equal(t, init[0], got[0], "%s: logits changed", what)
	want, have := kitAsI32(ref[1])[0], kitAsI32(got[1])[0]
	require.Equal(t, want, have, "%s: seed %d step %d", what, seed, step)
	require.Equal(t, ref[3], got[3], "%s: counts", what)
	if sp.top >= 0 {
		rl, gl := ggml.BytesF32(ref[5]), ggml.BytesF32(got[5])
		for i := range rl {
			if i > 0 && i%2 == 1 {
				require.Equal(t, math.Float32bits(rl[i]), math.Float32bits(gl[i]), "%s: logprobs top id %d", what, i/2)
				continue
			}
			if math.IsInf(float64(rl[i]), 0) {
				require.Equal(t, rl[i], gl[i], "%s: logprobs word %d", what, i)
			} else {
				require.InDelta(t, rl[i], gl[i], 1e-4, "%s: logprobs word %d", what, i)
			}
		}
	}
	return have
}

// Sample: the GPU sampler picks exactly the CPU's token over many seeds
// and parameter sets: argmax (temp <= 0), plain temperature, top-k, top-p,
// min-p and their combinations, penalties over a history (repeats, ids
// out of range), NaN and -Inf logits, flat distributions whose kept set or
// draw reaches past the first sorted window, and runs of more than a
// window of equal logits.
func TestSampleKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	peaked := func(n int) []float32 { return kitRand(r, n, 3) }
	flat := func(n int) []float32 { return kitRand(r, n, 0.05) }
	steps := func(n int) []float32 {
		x := kitRand(r, n, 1)
		for i := range x {
			x[i] = float32(math.Round(float64(x[i])*2) / 2) // few values, long runs of ties
		}
		return x
	}
	plateau := func(n int) []float32 {
		x := make([]float32, n) // one run of equal logits holds most of the mass
		for i := 0; i < 20; i++ {
			x[r.IntN(n)] = float32(r.Float64() * 2)
		}
		return x
	}
	hist := []int32{5, 9, 5, -3, 70000, 2, 9, 5, 0, 11}
	bias := map[int32]float32{0: 100, 2: -100, 6: 1.5, 300: -3}
	params := []sampleParams{
		{temp: 0, top: -1},
		{temp: -1, rep: 1.3, hist: hist, top: 3},
		{temp: 1, top: -1},
		{temp: 0.7, topK: 40, top: 20},
		{temp: 0.8, topP: 0.9, top: -1},
		{temp: 1.1, minP: 0.05, bias: bias, top: 0},
		{temp: 0.9, topK: 100, topP: 0.95, minP: 0.02, top: -1},
		{temp: 1, topK: 1, top: -1},
		{temp: 0.6, topP: 0.5, rep: 1.15, pres: 0.3, freq: 0.2, hist: hist, bias: bias, top: 5},
		{temp: 1.3, topP: 1, minP: 0, rep: 0.8, hist: hist, top: -1},
		{temp: 1, topK: 3000, topP: 0.7, top: -1},
	}
	draws := 0
	for _, v := range []struct {
		name string
		x    []float32
	}{
		{"tiny", []float32{0.5}},
		{"seven", []float32{1, 2, 2, float32(math.NaN()), -1, float32(math.Inf(-1)), 2}},
		{"peaked1000", peaked(1000)},
		{"peaked32000", peaked(32000)},
		{"flat6000", flat(6000)},
		{"ties6000", steps(6000)},
		{"plateau5000", plateau(5000)},
	} {
		for pi, sp := range params {
			if len(v.x) > 10000 && pi%3 != 0 {
				continue // the big vocabulary with a third of the sets
			}
			for s := 0; s < 3; s++ {
				seed := r.Uint64()
				runSample(t, v.x, sp, seed, s*17+pi, fmt.Sprintf("%s params %d", v.name, pi))
				draws++
			}
		}
	}
	t.Logf("sample: %d draws, all equal to the CPU's", draws)
}

// Every logit -Inf or some +Inf: the first maximum, as the CPU.
func TestSampleDegenerate(t *testing.T) {
	ninf, pinf := float32(math.Inf(-1)), float32(math.Inf(1))
	for _, x := range [][]float32{
		{ninf, ninf, ninf},
		{1, pinf, 3, pinf},
		{float32(math.NaN()), float32(math.NaN())},
	} {
		runSample(t, x, sampleParams{temp: 1, topP: 0.9, top: 2}, 42, 0, "degenerate")
	}
}

// TestSampleFixedPointCut: a top-p whose fixed-point target
// (plan.SampleFrac) is exactly the top token's mass, where float64 would
// keep the second token too (engine/cpu's TestSampleNoTopKKernelMasses):
// the kernel and the CPU both keep only the top, by construction.
func TestSampleFixedPointCut(t *testing.T) {
	x := []float32{0, math.Float32frombits(0xbe529043)}
	sp := sampleParams{temp: 1, topP: math.Float32frombits(0x3f0d1d32), top: -1}
	for step := range 32 {
		want, have := sampleBoth(t, x, sp, 5, step)
		require.Equal(t, int32(0), want, "step %d: the CPU", step)
		require.Equal(t, want, have, "step %d: %s", step, TestBackend(t).Name())
	}
}

// sampleBoth returns the CPU's and the backend's tokens for one draw.
func sampleBoth(t *testing.T, x []float32, sp sampleParams, seed uint64, step int) (want, have int32) {
	t.Helper()
	d, init := sampleInit(x, sp, seed, step)
	ref, got := kitRun(t, d, init)
	return kitAsI32(ref[1])[0], kitAsI32(got[1])[0]
}

// TestSamplePlateauCut: a run of more than a window of equal logits (the
// sampler's tie path) cut by top-k, top-p or min-p, over many seeds; every
// draw that differs from the CPU's is logged before the test fails.
func TestSamplePlateauCut(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, 5000)
	for i := 0; i < 20; i++ {
		x[r.IntN(len(x))] = float32(r.Float64() * 2)
	}
	bad, draws := 0, 0
	for pi, sp := range []sampleParams{{temp: 1}, {temp: 0.8, topP: 0.9}, {temp: 0.8, topP: 0.5}, {temp: 1, topP: 0.99},
		{temp: 1.1, minP: 0.05}, {temp: 1, topK: 3000}, {temp: 1, topK: 40}} {
		sp.top = -1
		for s := 0; s < 8; s++ {
			seed := r.Uint64()
			want, have := sampleBoth(t, x, sp, seed, s)
			draws++
			if want != have {
				bad++
				t.Logf("params %d %+v seed %d step %d: cpu %d, %s %d", pi, sp, seed, s, want, TestBackend(t).Name(), have)
			}
		}
	}
	require.Zero(t, bad, "%d of %d draws differ", bad, draws)
}

// TestSampleNoTopKRefine: without top-k the kernel lands in one bin of its
// histogram of the vocabulary; these logits put more than a window of
// distinct values into one bin (an outlier stretches the range, the rest
// is a narrow band), so the bin is refined by key, once into distinct
// values ("band") and once into runs of equal logits ("levels"); every
// draw must be the CPU's.
func TestSampleNoTopKRefine(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	band := kitRand(r, 20000, 0.02)
	band[123] = 30
	levels := make([]float32, 20000)
	for i := range levels {
		levels[i] = float32(r.IntN(3)) * 0.001
	}
	levels[7] = 25
	for _, v := range []struct {
		name string
		x    []float32
	}{{"band", band}, {"levels", levels}} {
		for pi, sp := range []sampleParams{{temp: 1, top: -1}, {temp: 0.7, topP: 0.95, top: -1},
			{temp: 40, topP: 0.5, top: -1}, {temp: 30, minP: 0.9, top: -1}, {temp: 50, topP: 0.99, minP: 0.5, top: 2}} {
			for s := 0; s < 3; s++ {
				runSample(t, v.x, sp, r.Uint64(), s, fmt.Sprintf("%s params %d", v.name, pi))
			}
		}
	}
}

// TestSampleNoTopKChatShape: the chat's shape, no top-k over a vocabulary
// of many mass groups (49,152 logits, 24 groups of 2,048, and an odd size),
// flat enough that the draw's landing bin holds hundreds of tokens; every
// draw must be the CPU's.
func TestSampleNoTopKChatShape(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, n := range []int{49152, 49157} {
		x := kitRand(r, n, 0.3)
		for pi, sp := range []sampleParams{{temp: 0.7, top: -1}, {temp: 0.7, topP: 0.95, top: -1},
			{temp: 1, minP: 0.05, top: -1}} {
			for s := 0; s < 2; s++ {
				runSample(t, x, sp, r.Uint64(), 40+s, fmt.Sprintf("n %d params %d", n, pi))
			}
		}
	}
}

// SampleDraws: one Sample dispatch with draws bound (the batch plan's
// step of draws) makes each draw exactly as the CPU's one-by-one draws:
// slots in any order and not all of them, two draws on one logits row,
// each slot with its own settings (plain temperature on the index path,
// top-k, top-p, penalties with counts, logit_bias, logprobs, argmax) and
// its own step, logits rows at a stride, and each draw its own scratch.
func TestSampleDraws(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const n, rows, ldx, slots = 3000, 6, 3011, 7
	hist := []int32{5, 9, 5, 2, 9, 5, 0, 11, 2999}
	bias := map[int32]float32{0: 100, 2: -100, 6: 1.5, 300: -3}
	params := [slots]sampleParams{
		{temp: 1, top: -1},
		{temp: 0.7, topK: 40, top: 5},
		{temp: 0.8, topP: 0.9, top: -1},
		{temp: 0.6, topP: 0.5, rep: 1.15, pres: 0.3, freq: 0.2, hist: hist, bias: bias, top: 3},
		{temp: 0, top: 0},
		{temp: 1.1, minP: 0.05, bias: bias, top: -1},
		{temp: 0.9, rep: 1.3, hist: hist, top: -1},
	}
	x := make([]float32, (rows-1)*ldx+n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 3)
	}
	var sw, cs []int32
	for s, sp := range params {
		st := plan.SampleSettings{TopK: sp.topK, TopP: sp.topP, MinP: sp.minP, Temp: sp.temp, Repeat: sp.rep,
			Presence: sp.pres, Frequency: sp.freq, Seed: uint64(1000 + s), Logprobs: sp.top >= 0, Top: sp.top}
		for id := range int32(n) {
			if v, ok := sp.bias[id]; ok {
				st.BiasIDs, st.Bias = append(st.BiasIDs, id), append(st.Bias, v)
			}
		}
		w := make([]uint32, plan.SampleSettingsWords)
		st.Encode(w)
		for _, v := range w {
			sw = append(sw, int32(v))
		}
		c := make([]int32, 2*n+1)
		for _, id := range sp.hist {
			plan.CountSampled(c, n, id)
		}
		cs = append(cs, c...)
	}
	for round, draws := range [][][3]int32{
		{{3, 1, 7}, {0, 4, 1}, {6, 0, 12}, {2, 5, 3}, {5, 4, 99}}, // rows 4 twice; slots 1 and 4 idle
		{{1, 2, 0}, {4, 3, 5}},
		{{0, 0, 2}, {1, 1, 2}, {2, 2, 2}, {3, 3, 2}, {4, 4, 2}, {5, 5, 2}, {6, 0, 2}},
	} {
		var dw []int32
		for _, d := range draws {
			dw = append(dw, d[:]...)
		}
		m := len(draws)
		d := plan.SampleArgs{N: n, M: m, Ldx: ldx, Slots: slots, XRows: rows}.Dispatch()
		out := make([]int32, slots)
		for i := range out {
			out[i] = -1
		}
		init := [][]byte{kitF32(x), kitI32(out), kitI32(sw), kitI32(cs), kitF32(kitNaNs(m * 2 * n)),
			kitF32(kitNaNs(slots * plan.SampleLogprobWords)), kitI32(dw)}
		ref, got := kitRun(t, d, init)
		require.Equal(t, init[0], got[0], "round %d: logits changed", round)
		require.Equal(t, kitAsI32(ref[1]), kitAsI32(got[1]), "round %d: drawn tokens", round)
		require.Equal(t, ref[3], got[3], "round %d: counts", round)
		rl, gl := ggml.BytesF32(ref[5]), ggml.BytesF32(got[5])
		for i := range rl {
			if math.IsNaN(float64(rl[i])) || math.IsInf(float64(rl[i]), 0) || i%plan.SampleLogprobWords%2 == 1 {
				require.Equal(t, math.Float32bits(rl[i]), math.Float32bits(gl[i]), "round %d: logprobs word %d", round, i)
			} else {
				require.InDelta(t, rl[i], gl[i], 1e-4, "round %d: logprobs word %d", round, i)
			}
		}
		drawn := kitAsI32(got[1])
		for s := range slots {
			used := false
			for _, dr := range draws {
				used = used || int(dr[0]) == s
			}
			require.Equal(t, used, drawn[s] >= 0, "round %d: slot %d drawn %v", round, s, used)
		}
		t.Logf("round %d: %d draws, tokens %v", round, m, drawn)
	}
}
