package cpu

import (
	"math"
	"sync/atomic"
)

// attnWideTask runs single-query attention whose (row, head) items are
// fewer than the pool's workers — the Whisper decoder's cross-attention:
// 6 heads over 1,500 encoder keys, which attnTask left to 6 of 16
// workers. Where no probabilities are bound it is one job (issue #37,
// round 6): each of its items takes one run of an item's keys, its scores,
// their exponentials against the run's own maximum and the run's weighted
// values (a partial softmax, as flash-decoding splits a row), and the last
// of an item's runs to finish merges the item's partials in run order, so
// a decoder token waits at one barrier a layer where it took two (three
// before round 4). The merge rescales each run's sum and values to the
// row's maximum, so the output is the softmax-weighted sum of attnTask to
// rounding (TestAttnWide: a float64 reference), not bit for bit, and the
// same whichever worker merges. Where the probabilities are bound (written
// out) it runs two or three jobs: the scores by runs of keys, the softmax
// in place, then the values by 32-wide slices of the head; each score is
// one key's kernel call as attnTask makes it (runs start a multiple of 4
// keys in, where keyScoresF32's groups of 4 do), the softmax is the same
// function of the same row, and each output element adds the same
// products in the same order (addValuesF32 keeps its 32-wide slices
// apart), so those results are attnTask's bit for bit.
type attnWideTask struct {
	a      *attnTask
	phase  int
	runs   int         // score jobs per item
	run    int         // keys per score job, a multiple of 4
	s      [][]float32 // each item's score row (item's s)
	scores []float32   // the rows where no probs are bound
	// the one-job form (wideRuns): each run's maximum, exponentials' sum
	// and weighted values (hd floats), and each item's runs still to finish
	runMax  []float32
	runSum  []float64
	runOut  []float32
	runLeft []atomic.Int32
}

const (
	wideScores = iota
	wideSoftmax
	wideValues
	wideRuns // a run's scores, partial softmax and values; an item's last run merges
)

// wideSlice is the values job's share of a head: addValuesF32's register
// block.
const wideSlice = 32

// useAttnWide: a's items leave workers idle, each is long enough to
// split, and its caches are f32 with a head addValuesF32's assembly
// splits in wideSlice slices.
func (e *Exec) useAttnWide(a *attnTask) bool {
	w := e.pool.Workers()
	return w > 1 && a.k.h == nil && a.hd%wideSlice == 0 && a.m*a.nHead < w && a.kvLen >= 256
}

// attendWide runs a (checked, its views set) as attnWideTask says.
func (e *Exec) attendWide(a *attnTask) {
	t := &e.wideT
	items := a.m * a.nHead
	if cap(t.s) < items {
		t.s = make([][]float32, items)
	}
	t.a, t.s = a, t.s[:items]
	if a.probs == nil {
		e.attendRuns(t, items)
		t.a = nil
		return
	}
	// about two score jobs per worker, of at least 64 keys
	perItem := (2*e.pool.Workers() + items - 1) / items
	t.run = max(64, roundUp((a.kvLen+perItem-1)/perItem, 4))
	t.runs = (a.kvLen + t.run - 1) / t.run
	t.phase = wideSoftmax // the items' rows, cleared outside their windows
	for it := range items {
		_, _, t.s[it], _, _, _ = a.item(it, nil)
	}
	t.phase = wideScores
	e.pool.Run(items*t.runs, 1, t)
	t.phase = wideSoftmax
	e.pool.Run(items, 1, t)
	t.phase = wideValues
	e.pool.Run(items*a.hd/wideSlice, 1, t)
	t.a = nil
}

// attendRuns is attendWide's one job (no probabilities bound): about four
// runs per worker, of at least 64 keys, so the items' uneven ends and the
// merges balance over the workers.
func (e *Exec) attendRuns(t *attnWideTask, items int) {
	a := t.a
	perItem := (4*e.pool.Workers() + items - 1) / items
	t.run = max(64, roundUp((a.kvLen+perItem-1)/perItem, 4))
	t.runs = (a.kvLen + t.run - 1) / t.run
	n := items * t.runs
	if len(t.scores) < items*a.kvLen {
		t.scores = make([]float32, items*a.kvLen)
	}
	if len(t.runMax) < n {
		t.runMax, t.runSum = make([]float32, n), make([]float64, n)
		t.runOut = make([]float32, n*a.hd)
	}
	if len(t.runOut) < n*a.hd {
		t.runOut = make([]float32, n*a.hd)
	}
	if len(t.runLeft) < items {
		t.runLeft = make([]atomic.Int32, items)
	}
	for it := range items {
		t.s[it] = t.scores[it*a.kvLen : (it+1)*a.kvLen]
		t.runLeft[it].Store(int32(t.runs))
	}
	t.phase = wideRuns
	e.pool.Run(n, 1, t)
}

// runPart is run r of item it: the scores of its keys, their exponentials
// against the run's maximum (runMax) and their sum (runSum), and the sum
// of the values weighted by the exponentials (runOut). A run outside the
// item's visible keys has maximum −Inf and sum 0.
func (t *attnWideTask) runPart(it, r int) {
	a := t.a
	i := it*t.runs + r
	q, _, first, nvis, off := a.itemView(it)
	j0, j1 := first+r*t.run, min(first+(r+1)*t.run, nvis)
	po := t.runOut[i*a.hd : (i+1)*a.hd]
	clear(po)
	if j0 >= j1 {
		t.runMax[i], t.runSum[i] = float32(math.Inf(-1)), 0
		return
	}
	s := t.s[it][j0:j1]
	keyScoresF32(s, q, a.k.f[off+(j0-first)*a.ps:], a.ps, a.scale)
	mx := maxRow(s, 1)
	t.runMax[i], t.runSum[i] = mx, expScaled(s, 1, mx)
	addValuesF32(po, s, a.v.f[off+(j0-first)*a.ps:], a.ps)
}

// mergeRuns writes item it's output from its runs' partials, in run order:
// o = Σ_r e^(m_r−M)·out_r / Σ_r e^(m_r−M)·sum_r with M the largest m_r.
func (t *attnWideTask) mergeRuns(it int) {
	a := t.a
	_, o, _, _, _ := a.itemView(it)
	clear(o)
	runs := t.runMax[it*t.runs : (it+1)*t.runs]
	mx := float32(math.Inf(-1))
	for _, m := range runs {
		mx = max(mx, m)
	}
	if math.IsInf(float64(mx), -1) {
		return // nothing visible: the output is zero
	}
	var sum float64
	for r, m := range runs {
		if t.runSum[it*t.runs+r] == 0 {
			continue
		}
		c := exp32(m - mx)
		sum += float64(c) * t.runSum[it*t.runs+r]
		axpyF32(o, c, t.runOut[(it*t.runs+r)*a.hd:][:a.hd])
	}
	inv := float32(1 / sum)
	for d := range o {
		o[d] *= inv
	}
}

func (t *attnWideTask) Do(w, lo, hi int) {
	a := t.a
	for i := lo; i < hi; i++ {
		switch t.phase {
		case wideScores:
			it, r := i/t.runs, i%t.runs
			q, _, first, nvis, off := a.itemView(it)
			j0, j1 := first+r*t.run, min(first+(r+1)*t.run, nvis)
			if j0 < j1 {
				keyScoresF32(t.s[it][j0:j1], q, a.k.f[off+(j0-first)*a.ps:], a.ps, a.scale)
			}
		case wideSoftmax:
			_, o, first, nvis, _ := a.itemView(i)
			clear(o)
			if first < nvis {
				softmaxScaled(t.s[i][first:nvis], 1)
			}
		case wideValues:
			per := a.hd / wideSlice
			it, c := i/per, (i%per)*wideSlice
			_, o, first, nvis, off := a.itemView(it)
			if first < nvis {
				addValuesF32(o[c:c+wideSlice], t.s[it][first:nvis], a.v.f[off+c:], a.ps)
			}
		case wideRuns:
			it := i / t.runs
			t.runPart(it, i%t.runs)
			if t.runLeft[it].Add(-1) == 0 { // the item's last run: every partial is written
				t.mergeRuns(it)
			}
		}
	}
}
