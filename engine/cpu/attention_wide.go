package cpu

// attnWideTask runs single-query attention whose (row, head) items are
// fewer than the pool's workers — the Whisper decoder's cross-attention:
// 6 heads over 1,500 encoder keys, which attnTask left to 6 of 16
// workers — in two jobs: the scores by runs of keys, then the softmax and
// the values by 32-wide slices of the head, each slice's item taking the
// softmax of its head's row into its worker's own row (a decoder token
// waits at one barrier fewer a layer: issue #37). Where the probabilities
// are bound (written out) the softmax runs in place as a job of its own
// between the two. Each score is one key's kernel call as attnTask makes
// it (runs start a multiple of 4 keys in, where keyScoresF32's groups of
// 4 do), the softmax is the same function of the same row, and each
// output element adds the same products in the same order (addValuesF32
// keeps its 32-wide slices apart), so the results are attnTask's bit for
// bit.
type attnWideTask struct {
	a      *attnTask
	phase  int
	runs   int         // score jobs per item
	run    int         // keys per score job, a multiple of 4
	s      [][]float32 // each item's score row (item's s)
	scores []float32   // the rows where no probs are bound
}

const (
	wideScores = iota
	wideSoftmax
	wideValues
	wideSoftValues // wideSoftmax into the worker's row, then wideValues
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
	if a.probs == nil {
		if need := items * a.kvLen; len(t.scores) < need {
			t.scores = make([]float32, need)
		}
	}
	if cap(t.s) < items {
		t.s = make([][]float32, items)
	}
	t.a, t.s = a, t.s[:items]
	// about two score jobs per worker, of at least 64 keys
	perItem := (2*e.pool.Workers() + items - 1) / items
	t.run = max(64, roundUp((a.kvLen+perItem-1)/perItem, 4))
	t.runs = (a.kvLen + t.run - 1) / t.run
	t.phase = wideSoftmax // the items' rows, cleared outside their windows
	for it := range items {
		var scratch []float32
		if a.probs == nil {
			scratch = t.scores[it*a.kvLen : (it+1)*a.kvLen]
		}
		_, _, t.s[it], _, _, _ = a.item(it, scratch)
	}
	t.phase = wideScores
	e.pool.Run(items*t.runs, 1, t)
	t.phase = wideSoftValues
	if a.probs != nil {
		t.phase = wideSoftmax
		e.pool.Run(items, 1, t)
		t.phase = wideValues
	}
	e.pool.Run(items*a.hd/wideSlice, 1, t)
	t.a = nil
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
		case wideSoftValues:
			per := a.hd / wideSlice
			it, c := i/per, (i%per)*wideSlice
			_, o, first, nvis, off := a.itemView(it)
			clear(o[c : c+wideSlice])
			if first < nvis {
				p := a.scores[w][first:nvis] // the worker's row (attnTask's scores)
				copy(p, t.s[it][first:nvis])
				softmaxScaled(p, 1)
				addValuesF32(o[c:c+wideSlice], p, a.v.f[off+c:], a.ps)
			}
		}
	}
}
