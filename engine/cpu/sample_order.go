package cpu

import (
	"math"
	"sort"

	"github.com/harkapp/hark/engine/plan"
)

// The Sample kernel's walks in the order (descending scaled logit, ties to
// the lower id) without sorting the vocabulary. Every token's mass
// exp(l-lmax) is histogrammed into sampleBins bins of equal width over the
// finite logits' range; a bin is a contiguous stretch of the order, so
// the tokens of the bins above the one where a walk lands come earlier
// whatever their order among themselves, and their cumulative mass is the
// bins' sums. Only the landing bin's tokens are sorted; when it holds more
// than sampleSortCap (nearly flat distributions), it is histogrammed again
// over its own range until it does or is a run of equal logits (already in
// the order: id order). Each refinement leaves the extremes in different
// bins, so the set shrinks and the range narrows ~sampleBins-fold: a few
// levels at most.
//
// Masses are the MSL kernel's fixed-point integers (plan.SampleExpFx), so
// every sum is exact whatever its order: the result is a full sort's
// exactly, and the kernel's (which bins and sums in another order) by
// construction.

// sampleBins is the resolution of the histograms; a bin of at most
// sampleSortCap tokens is sorted.
const (
	sampleBins    = 1024
	sampleSortCap = 256
)

// locBins is a mass histogram: bins [0, sampleBins) by distance below the
// top, bin sampleBins the -Inf logits (last in the order, no mass).
type locBins struct {
	mass  [sampleBins + 1]uint64
	count [sampleBins + 1]int32
}

func (h *locBins) reset() {
	clear(h.mass[:])
	clear(h.count[:])
}

// binScale maps logits in [lo, hi] to bins: bin(v) does not rise as v
// falls, so each bin is a contiguous stretch of the order.
type binScale struct {
	hi, scale float64
}

func newBinScale(hi, lo float32) binScale {
	s := binScale{hi: float64(hi)}
	if w := float64(hi) - float64(lo); w > 0 {
		s.scale = sampleBins / w
	}
	return s
}

func (s binScale) bin(v float32) int {
	if math.IsInf(float64(v), -1) {
		return sampleBins
	}
	return min(int((s.hi-float64(v))*s.scale), sampleBins-1)
}

// sampleOrder is one Sample dispatch's view of the order: the scaled
// logits l, their top lmax, and the whole vocabulary's histogram top
// under scale (filled by the caller). ids (len(l)) and sorter are scratch.
type sampleOrder struct {
	l      []float32
	ids    []int32
	lmax   float32
	scale  binScale
	top    locBins
	sub    locBins // a refinement's histogram
	sorter candSorter
	// ev[i] and bins[i] are token i's fixed-point mass exp(l-lmax) and
	// bin under scale, computed once per dispatch across the pool (masses)
	ev   []uint64
	bins []uint16
	// minPFx is min-p's least kept mass; parts[w] is worker w's share of
	// top and of the count of tokens min-p keeps (masses sums them)
	minPFx uint64
	parts  []massPart
	// chunkSums[c] is the mass of the tokens [c·massGrain, (c+1)·massGrain)
	// (drawIndex)
	chunkSums []uint64
	// sorted counts the tokens the dispatch's walks sorted, exps the
	// exponentials it computed, walked the tokens drawIndex's walk read
	// (tests bound the work by them)
	sorted, exps, walked int
}

// massPart is one pool worker's share of the histogram pass.
type massPart struct {
	bins      locBins
	keep, did int // tokens of mass >= minPFx; tokens it took (tests)
	// todo is drawIndex's scratch for sampleExpFxSum (massGrain)
	todo []int32
}

// massGrain is the tokens a pool chunk of sampleOrder.masses (and of
// drawIndex) takes.
const massGrain = 4096

// masses fills ev and bins for every token of l and the histogram top,
// and returns the total mass z and the count of tokens of mass >= minPFx,
// across the pool: the exponentials are most of a no-top-k draw's work,
// each is the same whichever worker computes it, and the workers' sums are
// exact integers, so the tokens do not change.
func (o *sampleOrder) masses(p *Pool, minPFx uint64) (z uint64, keep int) {
	n := len(o.l)
	if cap(o.ev) < n {
		o.ev, o.bins = make([]uint64, n), make([]uint16, n)
	}
	o.ev, o.bins = o.ev[:n], o.bins[:n]
	if len(o.parts) < p.Workers() {
		o.parts = make([]massPart, p.Workers())
	}
	for i := range o.parts {
		o.parts[i].bins.reset()
		o.parts[i].keep, o.parts[i].did = 0, 0
	}
	o.minPFx = minPFx
	p.Run(n, massGrain, o)
	o.exps = n
	o.top.reset()
	for i := range o.parts {
		w := &o.parts[i]
		for b := range w.bins.mass {
			o.top.mass[b] += w.bins.mass[b]
			o.top.count[b] += w.bins.count[b]
		}
		keep += w.keep
	}
	// the bins' sums are exact integers: their total is every mass's
	for _, m := range o.top.mass {
		z += m
	}
	return z, keep
}

// Do implements Task for masses.
func (o *sampleOrder) Do(w, lo, hi int) {
	ev, l, bins, part := o.ev[lo:hi], o.l[lo:hi], o.bins[lo:hi], &o.parts[w]
	todo := sampleExpFxs(ev, l, o.lmax)
	sampleBinsOf(bins, l, o.scale)
	for i, b := range bins {
		e := ev[i]
		if todo && e == sampleExpFxTodo {
			e = plan.SampleExpFx(l[i] - o.lmax)
			ev[i] = e
		}
		part.bins.mass[b] += e
		part.bins.count[b]++
		if e >= o.minPFx {
			part.keep++
		}
	}
	part.did += hi - lo
}

// sampleBinsOf sets bins[i] = s.bin(l[i]) for every token of l (len(bins)
// ≥ len(l)); l holds no NaN and nothing above s.hi (the scaled logits
// under their top). AVX2 machines run it in assembly
// (sample_bins_amd64.s), the same bins.
var sampleBinsOf = sampleBinsOfGeneric

func sampleBinsOfGeneric(bins []uint16, l []float32, s binScale) {
	for i, v := range l {
		bins[i] = uint16(s.bin(v))
	}
}

// locate returns the first token of the order whose cumulative mass
// exceeds target (strict) or reaches it, or the token at rank limit-1
// when that comes first; with its rank and cumulative mass (through it).
func (o *sampleOrder) locate(target uint64, strict bool, limit int) (int32, int, uint64) {
	reached := func(c uint64) bool { return c > target || !strict && c == target }
	var rank int
	var cum uint64
	b := landing(&o.top, &rank, &cum, reached, limit)
	m := 0
	for i, bi := range o.bins {
		if int(bi) == b {
			o.ids[m] = int32(i)
			m++
		}
	}
	set := o.ids[:m] // in id order
	for len(set) > sampleSortCap && b != sampleBins {
		hi, lo := o.l[set[0]], o.l[set[0]]
		for _, id := range set {
			hi, lo = max(hi, o.l[id]), min(lo, o.l[id])
		}
		if hi == lo {
			break // equal logits: in the order already
		}
		sc := newBinScale(hi, lo)
		o.sub.reset()
		for _, id := range set {
			k := sc.bin(o.l[id])
			o.sub.mass[k] += o.ev[id]
			o.sub.count[k]++
		}
		b = landing(&o.sub, &rank, &cum, reached, limit)
		m = 0
		for _, id := range set {
			if sc.bin(o.l[id]) == b {
				set[m] = id
				m++
			}
		}
		set = set[:m]
	}
	o.sorted += len(set)
	o.sorter = candSorter{idx: set, l: o.l}
	sort.Sort(&o.sorter)
	o.sorter = candSorter{}
	for i, id := range set {
		cum += o.ev[id]
		if reached(cum) || rank+i == limit-1 {
			return id, rank + i, cum
		}
	}
	// not reached (a target at or past the whole mass): the last
	return set[len(set)-1], rank + len(set) - 1, cum
}

// landing is the first bin of h where the cumulative mass (from *cum at
// *rank) is reached or rank limit-1 falls, else (a target past the whole
// mass) the last
// non-empty one; *rank and *cum advance past the bins above it.
func landing(h *locBins, rank *int, cum *uint64, reached func(uint64) bool, limit int) int {
	last := -1
	for b := range h.mass {
		c := int(h.count[b])
		if c == 0 {
			continue
		}
		last = b
		if reached(*cum+h.mass[b]) || *rank+c > limit-1 {
			return b
		}
		*rank += c
		*cum += h.mass[b]
	}
	*rank -= int(h.count[last])
	*cum -= h.mass[last]
	return last
}
