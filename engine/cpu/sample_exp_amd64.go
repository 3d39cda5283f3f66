package cpu

import "github.com/harkapp/hark/engine/plan"

//go:noescape
func sampleExpFxAVX2(ev *uint64, l *float32, n int, lmax float32, tie float64) int

// sampleExpFxTie: the assembly leaves to plan.SampleExpFx every product
// within 0.5−sampleExpFxTie of a half. Elsewhere the two agree: the
// assembly's exp is within ~0.005 units of 2^−43 of the true one (a 13-term
// series after Cody-Waite reduction, fused), SampleExpFx's math.Exp within
// ~0.004 and its integer series within 0.003, so a product at least 0.01
// from a half rounds the same way in each (TestSampleExpFxAsm checks it;
// 4M random products measured agree with a margin of 0.001). The band
// decides how many lanes take the scalar path, most of a draw's cost when
// it was 0.05 wide: 2% of the lanes now, 10% then.
const sampleExpFxTie = 0.49

//go:noescape
func sampleExpFxSumAVX2(ev *uint64, l *float32, n int, lmax float32, tie float64, todo *int32, sum *uint64) int

func init() {
	if hasAVX2 {
		sampleExpFxs = sampleExpFxsAVX2
		sampleExpFxSum = sampleExpFxSumAVX2Go
	}
}

func sampleExpFxsAVX2(ev []uint64, l []float32, lmax float32) bool {
	main := len(l) &^ 3
	todo := main > 0 && sampleExpFxAVX2(&ev[0], &l[0], main, lmax, sampleExpFxTie) > 0
	sampleExpFxsGeneric(ev[main:len(l)], l[main:], lmax)
	return todo
}

func sampleExpFxSumAVX2Go(ev []uint64, l []float32, lmax float32, todo []int32) uint64 {
	main := len(l) &^ 3
	var s uint64
	if main > 0 {
		todo = todo[:main]
		k := sampleExpFxSumAVX2(&ev[0], &l[0], main, lmax, sampleExpFxTie, &todo[0], &s)
		for _, i := range todo[:k] { // within 0.01 of a half
			m := plan.SampleExpFxNearHalf(l[i] - lmax)
			ev[i] = m
			s += m
		}
	}
	return s + sampleExpFxSumGeneric(ev[main:len(l)], l[main:], lmax, nil)
}
