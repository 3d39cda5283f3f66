package cpu

import (
	"math"
	"sort"
	"unsafe"

	"github.com/harkapp/hark/engine/plan"
)

// candSorter orders candidate token ids by descending logit, ties by the
// lower id; this is "descending probability" of the contract, taken on the
// logits because equal-looking probabilities may come from distinct logits.
type candSorter struct {
	idx []int32
	l   []float32
}

func (s *candSorter) Len() int      { return len(s.idx) }
func (s *candSorter) Swap(i, j int) { s.idx[i], s.idx[j] = s.idx[j], s.idx[i] }
func (s *candSorter) Less(i, j int) bool {
	a, b := s.idx[i], s.idx[j]
	if s.l[a] != s.l[b] {
		return s.l[a] > s.l[b]
	}
	return a < b
}

// sample implements the Sample kernel of the contract:
//
//  1. penalties over hist[0:histLen] (the binding's offset selects the
//     window; ids outside [0, n) are ignored): each distinct seen token
//     gets the repetition penalty once, then presence + count·frequency;
//  2. temperature (temp <= 0: argmax);
//  3. top-k, softmax over the survivors, top-p, min-p;
//  4. the first token whose cumulative renormalised mass exceeds
//     plan.Uniform(seed, step).
//
// NaN logits count as -Inf. Only the head of the sorted order matters, so
// candidates are gathered above a logit threshold that widens until the
// kept set is decided; the result is the same as sorting the whole
// vocabulary. Sums are in float64: the normaliser over the whole
// vocabulary in id order (it is also the kept mass when nothing is cut),
// prefix sums in the sorted order.
//
// Scratch (binding 3, f32[2n]): [0, n) the adjusted logits, [n, 2n) the
// candidate ids (as int32), which first serve as the penalty counters.
func (e *Exec) sample(d *plan.Dispatch) error {
	p := plan.DecodeSample(d)
	n, topK, histLen := p.N, p.TopK, p.HistLen
	topP, minP, temp, rep := p.TopP, p.MinP, p.Temp, p.Repeat
	pres, freq := p.Presence, p.Frequency
	seed := p.Seed
	step := uint64(p.Step)
	if n == 0 {
		return e.errf("sampling from an empty vocabulary")
	}
	x, err := e.f32(d, 0, n)
	if err != nil {
		return err
	}
	out, err := e.i32(d, 1, 1)
	if err != nil {
		return err
	}
	var hist []int32
	if present(d, 2) {
		if hist, err = e.i32(d, 2, histLen); err != nil {
			return err
		}
	}
	scr, err := e.f32(d, 3, satMul(2, n))
	if err != nil {
		return err
	}
	l := scr[:n]
	ids := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(scr[n:]))), n)
	for i, v := range x {
		if v != v {
			v = float32(math.Inf(-1))
		}
		l[i] = v
	}

	// 1. penalties
	penRep := rep != 0 && rep != 1
	if len(hist) > 0 && (penRep || pres != 0 || freq != 0) {
		clear(ids)
		for _, id := range hist {
			if id >= 0 && int(id) < n {
				ids[id]++
			}
		}
		for _, id := range hist {
			if id < 0 || int(id) >= n || ids[id] == 0 {
				continue
			}
			v := l[id]
			if penRep {
				if v > 0 {
					v /= rep
				} else {
					v *= rep
				}
			}
			v -= pres + float32(ids[id])*freq
			l[id] = v
			ids[id] = 0
		}
	}

	// 2. temperature
	if temp <= 0 || temp != temp {
		out[0] = int32(plan.ArgmaxRow(l))
		return nil
	}
	lmax := float32(math.Inf(-1))
	for i := range l {
		l[i] /= temp
		if l[i] > lmax {
			lmax = l[i]
		}
	}
	if math.IsInf(float64(lmax), 0) {
		// every logit -Inf, or some +Inf: the distribution degenerates to
		// the first maximum
		out[0] = int32(plan.ArgmaxRow(l))
		return nil
	}

	// 3. candidates. Without top-k the softmax runs over the whole
	// vocabulary, so its normaliser is known up front (summed in id order);
	// a histogram of the mass by distance from the top logit then tells how
	// far below it the candidates must reach for the top-p cutoff or the
	// draw to fall among them.
	u := float64(plan.Uniform(seed, step))
	k := n
	if topK > 0 && topK < n {
		k = topK
	}
	noCut := k == n && topP >= 1 && minP <= 0 // the kept set is everything
	var z float64
	delta := 16.0
	if k == n {
		var bins [sampleBins]float64
		for _, v := range l {
			ev := math.Exp(float64(v - lmax))
			z += ev
			if d := float64(lmax - v); d < 16 { // false for -Inf logits
				bins[int(d*(sampleBins/16.0))] += ev
			}
		}
		target := u * z
		if topP < 1 {
			target = float64(topP) * z
		}
		target *= 1 + 1e-9 // margin for the different summation order
		var cum float64
		for b, m := range bins {
			cum += m
			if cum >= target {
				delta = float64(b+1) * (16.0 / sampleBins)
				break
			}
		}
	}
	s := &e.sorter
	defer func() { s.idx, s.l = nil, nil }()
	for ; ; delta *= 4 {
		all := delta > 1e4
		thr := lmax - float32(delta)
		c := 0
		for i, v := range l {
			if all || v >= thr {
				ids[c] = int32(i)
				c++
			}
		}
		// complete: the candidates hold the whole candidate set (all of the
		// vocabulary, or the top k)
		complete := c == n
		if c > k {
			*s = candSorter{idx: ids[:c], l: l}
			selectTop(s, k)
			c, complete = k, true
		} else if c == k {
			complete = true
		}
		*s = candSorter{idx: ids[:c], l: l}
		sort.Sort(s)
		if k < n {
			if !complete {
				continue
			}
			z = 0
			for _, id := range ids[:c] {
				z += math.Exp(float64(l[id] - lmax))
			}
		}
		keep := -1
		var cum float64
		for i, id := range ids[:c] {
			ev := math.Exp(float64(l[id] - lmax))
			// the top token has ev = 1, so min-p compares against minP
			if minP > 0 && i > 0 && ev < float64(minP) {
				keep = i
				break
			}
			cum += ev
			if topP < 1 && cum >= float64(topP)*z {
				keep = i + 1
				break
			}
		}
		// 4. draw: the first token whose cumulative mass exceeds u times
		// the kept mass (z itself when nothing is cut)
		var mass float64
		lim := keep
		switch {
		case noCut:
			mass, lim = z, c
		case keep >= 0:
			for _, id := range ids[:keep] {
				mass += math.Exp(float64(l[id] - lmax))
			}
		case complete:
			keep, lim = c, c
			for _, id := range ids[:c] {
				mass += math.Exp(float64(l[id] - lmax))
			}
		default:
			continue // the kept set reaches past the candidates
		}
		target := u * mass
		cum = 0
		for _, id := range ids[:lim] {
			cum += math.Exp(float64(l[id] - lmax))
			if cum > target {
				out[0] = id
				return nil
			}
		}
		if !complete && noCut {
			continue // rounding left the draw past the candidates
		}
		out[0] = ids[lim-1]
		return nil
	}
}

// sampleBins is the resolution of the sampler's mass histogram (over 16
// logits below the top).
const sampleBins = 64

// selectTop moves the k best candidates of s (by its order) to the front
// of s.idx, in no particular order, in O(c log k): a heap of the best k
// seen so far with the worst of them at the root.
func selectTop(s *candSorter, k int) {
	h := s.idx
	// worse(i, j): candidate i ranks after j
	worse := func(i, j int) bool { return s.Less(j, i) }
	down := func(i int) {
		for {
			w := i
			if l := 2*i + 1; l < k && worse(l, w) {
				w = l
			}
			if r := 2*i + 2; r < k && worse(r, w) {
				w = r
			}
			if w == i {
				return
			}
			h[i], h[w] = h[w], h[i]
			i = w
		}
	}
	for i := k/2 - 1; i >= 0; i-- {
		down(i)
	}
	for j := k; j < len(h); j++ {
		if s.Less(j, 0) { // better than the worst kept
			h[0], h[j] = h[j], h[0]
			down(0)
		}
	}
}
