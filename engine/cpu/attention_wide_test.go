package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAttnWide holds the split single-query attention (attendWide) to a
// float64 reference and, where the probabilities are bound (its jobs by
// keys, then by slices), to attnTask's item loop bit for bit; without
// them (one job of runs whose partial softmaxes the last run merges) to
// attnTask within rounding and to itself bit for bit when run again. At
// odd key counts, head widths of 1-3 slices, grouped heads, a causal
// window (runs before it empty), on 2, 5 and 16 workers, with the AVX2
// kernels on and forced off.
func TestAttnWide(t *testing.T) {
	fast := [5]any{keyScoresF32, addValuesF32, softmaxScaled, maxRow, expScaled}
	defer func() {
		keyScoresF32 = fast[0].(func([]float32, []float32, []float32, int, float32))
		addValuesF32 = fast[1].(func([]float32, []float32, []float32, int))
		softmaxScaled = fast[2].(func([]float32, float32))
		maxRow = fast[3].(func([]float32, float32) float32)
		expScaled = fast[4].(func([]float32, float32, float32) float64)
	}()
	r := rand.New(rand.NewPCG(37, 5))
	for _, generic := range []bool{false, true} {
		if generic {
			keyScoresF32, addValuesF32, softmaxScaled = keyScoresF32Generic, addValuesF32Generic, softmaxScaledGeneric
			maxRow, expScaled = maxScaled, expScaledGeneric
		}
		for _, w := range []int{2, 5, 16} {
			e := &Exec{pool: NewPool(w)}
			for _, c := range []struct{ m, nHead, nKV, hd, kv, window int }{
				{1, 1, 1, 32, 257, 0}, {1, 6, 6, 64, 1500, 0}, {1, 4, 2, 96, 1001, 0}, {2, 3, 3, 64, 643, 300}, {1, 2, 1, 32, 1499, 0},
			} {
				for _, probs := range []bool{false, true} {
					checkAttnWide(t, e, r, c.m, c.nHead, c.nKV, c.hd, c.kv, c.window, probs, generic)
				}
			}
			e.pool.Close()
		}
	}
}

func checkAttnWide(t *testing.T, e *Exec, r *rand.Rand, m, nHead, nKV, hd, kv, window int, probs, generic bool) {
	t.Helper()
	ps := nKV * hd
	a := attnTask{q: randVec(r, m*nHead*hd, 1), k: typed{f: randVec(r, kv*ps, 1)}, v: typed{f: randVec(r, kv*ps, 1)},
		hd: hd, nHead: nHead, group: nHead / nKV, m: m, ldq: nHead * hd, ldo: nHead * hd, kvLen: kv, pos0: kv - m,
		window: window, causal: window > 0, scale: 0.125, hs: hd, ps: ps, ldp: kv}
	narrow, wide := a, a
	narrow.out, wide.out = make([]float32, m*nHead*hd), make([]float32, m*nHead*hd)
	if probs {
		narrow.probs, wide.probs = make([]float32, nHead*m*kv), make([]float32, nHead*m*kv)
	}
	narrow.scores = [][]float32{make([]float32, kv)}
	wide.scores = make([][]float32, e.pool.Workers()) // the executor's per-worker rows (the softmax's, without probs)
	for w := range wide.scores {
		wide.scores[w] = make([]float32, kv)
	}
	narrow.kvs = [][]kvSpan{make([]kvSpan, 1)}
	narrow.Do(0, 0, m*nHead)
	if m*nHead < e.pool.Workers() && !e.useAttnWide(&wide) {
		t.Fatalf("%d workers, %d×%d items over %d keys: not split", e.pool.Workers(), m, nHead, kv)
	}
	e.attendWide(&wide) // also where the items alone would fill the workers
	what := func() string {
		return map[bool]string{false: "AVX2", true: "generic"}[generic] + map[bool]string{false: "", true: ", probs"}[probs]
	}
	for i := range narrow.out {
		if probs && math.Float32bits(narrow.out[i]) != math.Float32bits(wide.out[i]) ||
			!probs && math.Abs(float64(narrow.out[i]-wide.out[i])) > 1e-6*(1+math.Abs(float64(narrow.out[i]))) {
			t.Fatalf("%s, %d workers, m %d heads %d/%d hd %d keys %d: out[%d] %v, attnTask %v", what(), e.pool.Workers(), m, nHead, nKV, hd, kv, i, wide.out[i], narrow.out[i])
		}
	}
	if !probs { // the merge's order is the runs', whichever worker runs it
		again := wide
		again.out = make([]float32, len(wide.out))
		e.attendWide(&again)
		for i := range again.out {
			if math.Float32bits(again.out[i]) != math.Float32bits(wide.out[i]) {
				t.Fatalf("%s, %d workers: out[%d] %v, then %v", what(), e.pool.Workers(), i, wide.out[i], again.out[i])
			}
		}
	}
	for i := range narrow.probs {
		if math.Float32bits(narrow.probs[i]) != math.Float32bits(wide.probs[i]) {
			t.Fatalf("%s, %d workers: probs[%d] %v, attnTask %v", what(), e.pool.Workers(), i, wide.probs[i], narrow.probs[i])
		}
	}
	// float64 reference
	for tq := range m {
		qpos := a.pos0 + tq
		nvis := min(kv, qpos+1)
		first := windowStart(qpos, window, nvis)
		for h := range nHead {
			base := (h / a.group) * hd
			q := a.q[tq*a.ldq+h*hd:][:hd]
			s := make([]float64, nvis)
			mx := math.Inf(-1)
			for j := first; j < nvis; j++ {
				for d := range hd {
					s[j] += float64(q[d]) * float64(a.k.f[j*ps+base+d])
				}
				s[j] *= float64(a.scale)
				mx = math.Max(mx, s[j])
			}
			var sum float64
			for j := first; j < nvis; j++ {
				s[j] = math.Exp(s[j] - mx)
				sum += s[j]
			}
			for d := range hd {
				var o float64
				for j := first; j < nvis; j++ {
					o += s[j] / sum * float64(a.v.f[j*ps+base+d])
				}
				if got := float64(wide.out[tq*a.ldo+h*hd+d]); math.Abs(got-o) > 1e-5 {
					t.Fatalf("%s, %d workers, m %d heads %d keys %d: out[%d,%d,%d] %v, float64 %v", what(), e.pool.Workers(), m, nHead, kv, tq, h, d, got, o)
				}
			}
		}
	}
}
