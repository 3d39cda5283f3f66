package cpu

import "github.com/harkapp/hark/engine/plan"

// sampleExpFxs sets ev[i] = plan.SampleExpFx(l[i]−lmax) for every token
// of l (len(ev) ≥ len(l)): each no-top-k draw's pass over the vocabulary.
// AVX2 machines run it in assembly (sample_exp_amd64.s), bit for bit the
// same integers.
var sampleExpFxs = sampleExpFxsGeneric

func sampleExpFxsGeneric(ev []uint64, l []float32, lmax float32) {
	for i, v := range l {
		ev[i] = plan.SampleExpFx(v - lmax)
	}
}
