package cpu

import "github.com/harkapp/hark/engine/plan"

// The Sample kernel's draw when nothing truncates the distribution (no
// top-k or top-k ≥ n, top-p ≥ 1 or NaN, min-p off): what an OpenAI chat
// request carries. Inverse-CDF sampling over any fixed order of the tokens
// samples the same distribution, so this draw takes index order, which
// needs no sort and no histogram: the first token whose cumulative
// fixed-point mass exceeds plan.SampleMul24(z, u·2^24), z the whole mass.
// The masses and each chunk's sum run across the pool; the serial part is
// the chunks' prefix and one chunk's tokens. The MSL kernel
// (shaders/sample.metal, smp_draw_index) walks the same integers in the
// same order, so both backends pick the same token by construction.

// untruncated reports that drawAll's settings cut nothing: no top-p (1 =
// off; NaN and above 1 too) and no min-p (minPFx, plan.SampleMinPFx, 0).
func untruncated(topP float32, minPFx uint64) bool { return !(topP < 1) && minPFx == 0 }

// indexMasses is sampleOrder's Task for drawIndex: each token's mass into
// ev and each massGrain chunk's sum into chunkSums.
type indexMasses sampleOrder

// drawIndex is the draw in index order over o.l (o.lmax its top); u24 is
// plan.Uniform24 of the draw.
func (o *sampleOrder) drawIndex(p *Pool, u24 uint32) int32 {
	n := len(o.l)
	if cap(o.ev) < n {
		o.ev, o.bins = make([]uint64, n), make([]uint16, n)
	}
	o.ev = o.ev[:n]
	chunks := (n + massGrain - 1) / massGrain
	if cap(o.chunkSums) < chunks {
		o.chunkSums = make([]uint64, chunks)
	}
	o.chunkSums = o.chunkSums[:chunks]
	if len(o.parts) < p.Workers() {
		o.parts = make([]massPart, p.Workers())
	}
	for i := range o.parts {
		o.parts[i].did = 0
		if cap(o.parts[i].todo) < massGrain {
			o.parts[i].todo = make([]int32, massGrain)
		}
	}
	p.Run(n, massGrain, (*indexMasses)(o))
	o.exps, o.walked = n, 0
	var z uint64 // exact: ≤ 2^43 a token, n ≤ 2^20
	for _, s := range o.chunkSums {
		z += s
	}
	// z ≥ the top token's mass > 0 and u24 < 2^24, so target < z: some
	// token's cumulative mass exceeds it
	target := plan.SampleMul24(z, u24)
	var cum uint64
	for c, s := range o.chunkSums {
		if cum+s <= target {
			cum += s
			continue
		}
		lo := c * massGrain
		for i, m := range o.ev[lo:min(lo+massGrain, n)] {
			cum += m
			if cum > target {
				o.walked = i + 1
				return int32(lo + i)
			}
		}
	}
	return int32(n - 1) // unreachable, as above (the kernel's choice too)
}

// Do implements Task: chunks start at multiples of massGrain, and a
// caller running the whole range alone gets it in one call, so each
// massGrain stretch is summed into its own slot.
func (t *indexMasses) Do(w, lo, hi int) {
	o := (*sampleOrder)(t)
	todo := o.parts[w].todo
	for c := lo; c < hi; c += massGrain {
		e := min(c+massGrain, hi)
		o.chunkSums[c/massGrain] = sampleExpFxSum(o.ev[c:e], o.l[c:e], o.lmax, todo)
	}
	o.parts[w].did += hi - lo
}
