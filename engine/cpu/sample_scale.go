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
	part.hi, part.lo = sampleScaleRow(s.l[lo:hi], s.src[lo:hi], s.temp, part.hi, part.lo)
	part.did += hi - lo
}

// sampleScaleRow sets l[i] = src[i]/temp with NaN as −Inf (len(l) ≥
// len(src)) and returns the largest of hi and every l[i], and the least of
// lo and every l[i] but −Inf. AVX2 machines run it in assembly
// (sample_scale_amd64.s): the same quotients bit for bit, the same
// extremes up to the sign of a zero, which nothing after tells apart.
var sampleScaleRow = sampleScaleRowGeneric

func sampleScaleRowGeneric(l, src []float32, temp, hi, lo float32) (float32, float32) {
	l = l[:len(src)]
	for i, v := range src {
		if v != v {
			v = float32(math.Inf(-1))
		}
		v /= temp
		l[i] = v
		hi = max(hi, v)
		if !math.IsInf(float64(v), -1) {
			lo = min(lo, v)
		}
	}
	return hi, lo
}
