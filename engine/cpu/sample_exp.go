package cpu

import "github.com/harkapp/hark/engine/plan"

// sampleExpFxs sets ev[i] = plan.SampleExpFx(l[i]−lmax) for every token
// of l (len(ev) ≥ len(l)): each no-top-k draw's pass over the vocabulary.
// AVX2 machines run it in assembly (sample_exp_amd64.s), which leaves
// sampleExpFxTodo in the few lanes it cannot round as SampleExpFx does and
// returns true when it left any: the caller computes those in its own pass
// over ev (a scan of its own for them cost a tenth of the draw).
var sampleExpFxs = sampleExpFxsGeneric

func sampleExpFxsGeneric(ev []uint64, l []float32, lmax float32) bool {
	for i, v := range l {
		ev[i] = plan.SampleExpFx(v - lmax)
	}
	return false
}

// sampleExpFxTodo marks a mass sampleExpFxs left to its caller (no mass
// is near it: they are at most plan.SampleFxOne).
const sampleExpFxTodo = ^uint64(0)

// sampleExpFxSum sets ev[i] = plan.SampleExpFx(l[i]−lmax) for every token
// of l, every mass exact (nothing left to the caller), and returns their
// sum: drawIndex's pass over each chunk. todo (room for len(l)) is scratch:
// the assembly lists the lanes it left to the scalar path there.
var sampleExpFxSum = sampleExpFxSumGeneric

func sampleExpFxSumGeneric(ev []uint64, l []float32, lmax float32, _ []int32) uint64 {
	var s uint64
	for i, v := range l {
		m := plan.SampleExpFx(v - lmax)
		ev[i] = m
		s += m
	}
	return s
}
