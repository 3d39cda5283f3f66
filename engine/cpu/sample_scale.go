package cpu

import "math"

// sampleScale is the Sample pass's temperature pass across the pool: l =
// src with NaN as -Inf, over temp, and each worker's largest and least
// finite result (a max and a min are the same in any order, so the draw
// does not change).
type sampleScale struct {
	src, l []float32
	temp   float32
	parts  []scalePart
}

// scalePart is one worker's share: its extremes and the tokens it took
// (tests count them).
type scalePart struct {
	hi, lo float32
	did    int
}

// scaleGrain is the tokens a pool chunk of the pass takes.
const scaleGrain = 8192

// run scales src into l (they may be the same) and returns the largest
// and the least finite scaled logit (+Inf when none is finite).
func (s *sampleScale) run(p *Pool, src, l []float32, temp float32) (hi, lo float32) {
	if len(s.parts) < p.Workers() {
		s.parts = make([]scalePart, p.Workers())
	}
	hi, lo = float32(math.Inf(-1)), float32(math.Inf(1))
	for i := range s.parts {
		s.parts[i] = scalePart{hi: hi, lo: lo}
	}
	s.src, s.l, s.temp = src, l, temp
	p.Run(len(l), scaleGrain, s)
	s.src, s.l = nil, nil
	for _, w := range s.parts {
		hi, lo = max(hi, w.hi), min(lo, w.lo)
	}
	return hi, lo
}

// Do implements Task.
func (s *sampleScale) Do(w, lo, hi int) {
	part := &s.parts[w]
	mx, mn := part.hi, part.lo
	l := s.l[lo:hi]
	for i, v := range s.src[lo:hi] {
		if v != v {
			v = float32(math.Inf(-1))
		}
		v /= s.temp
		l[i] = v
		mx = max(mx, v)
		if !math.IsInf(float64(v), -1) {
			mn = min(mn, v)
		}
	}
	part.hi, part.lo = mx, mn
	part.did += hi - lo
}
