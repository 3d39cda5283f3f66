package plan

import (
	"math"
	"math/bits"
)

// The Sample kernel's fixed-point masses (shaders/sample.metal: smp_exp_fx,
// smp_frac, smp_mul24, the min-p bound), for the CPU kernel to compute the
// very same integers: a token's mass exp(l−lmax) is round(exp·2^43), sums
// are exact and order-independent, so two backends that walk the same
// order with the same targets pick the same token whatever their
// summation order. msltest checks the MSL functions against these bit for
// bit.

// SampleFxOne is a mass of 1 (the top token's): masses have 43 fraction
// bits, so up to 2^20 tokens of mass ≤ 1 sum within 64 bits.
const SampleFxOne = uint64(1) << 43

// sampleExp2Tab[j] is 2^(j/16) in Q62.
var sampleExp2Tab = [16]uint64{
	0x4000000000000000, 0x42d561b3e6243d8a, 0x45cae0f1f545eb73, 0x48e1e9b9d588e19b,
	0x4c1bf828c6dc54b8, 0x4f7a993048d088d7, 0x52ff6b54d8a89c75, 0x56ac1f752150a563,
	0x5a827999fcef3242, 0x5e8451cfac061b5f, 0x62b39508aa836d6f, 0x6712460a8fc24072,
	0x6ba27e656b4eb57a, 0x70666f76154a7089, 0x75606373ee921c97, 0x7a92be8a92436616,
}

// sampleExpTaylor[k] is 1/k! in Q62 (rounded).
var sampleExpTaylor = [10]uint64{
	0x4000000000000000, 0x4000000000000000, 0x2000000000000000, 0xaaaaaaaaaaaaaab, 0x2aaaaaaaaaaaaab,
	0x88888888888889, 0x16c16c16c16c17, 0x3403403403403, 0x680680680680, 0xb8ef1d2ab64,
}

// mulShift is (a·b) >> s for s in [1, 64], of the 128-bit product.
func mulShift(a, b uint64, s uint) uint64 {
	hi, lo := bits.Mul64(a, b)
	if s == 64 {
		return hi
	}
	return hi<<(64-s) | lo>>s
}

// SampleExpFx is round(exp(d)·2^43) for d ≤ 0 as the kernel computes it
// (0 below −32 and for −Inf or NaN). Before it rounds, the kernel's
// integer series (expFxInt) is within 0.003 units of 2^−43 of float64's
// math.Exp(d)·2^43 (its truncations bound it; 300,000 draws measured it),
// so where that product's fraction is not within expFxTie of a half both
// round to the same integer: it is taken from math.Exp (twice as fast in
// Go), the rest from the series.
func SampleExpFx(d float32) uint64 {
	if !(d > -32) {
		return 0
	}
	if d >= 0 {
		return SampleFxOne
	}
	v := math.Exp(float64(d)) * (1 << 43)
	r := int64(v + 0.5) // rounded (0 <= v <= 2^43); branch-free but for the rare tie
	if math.Abs(v-float64(r)) > 0.5-expFxTie {
		return expFxInt(d)
	}
	return uint64(r)
}

// SampleExpFxNearHalf is SampleExpFx(d) by the kernel's integer series
// alone, the path SampleExpFx takes near a half: for a caller that knows
// d's product exp(d)·2^43 lies near a half (the CPU's assembly lists the
// lanes whose product it computed within 0.01 of one), where math.Exp
// would be computed first for nothing. The two agree for every d (the
// series is the definition; TestSampleExpFx).
func SampleExpFxNearHalf(d float32) uint64 {
	if !(d > -32) || d >= 0 {
		return SampleExpFx(d)
	}
	return expFxInt(d)
}

// expFxTie is the distance from a half (in units of 2^−43) within which
// SampleExpFx takes the kernel's series: over ten times the error.
const expFxTie = 0.04

// expFxInt is the kernel's smp_exp_fx for d in (−32, 0): exp(d) =
// 2^−k·2^(j/16)·exp(g) with −d·log2 e in Q52 from the exact −d·2^52, k
// its ceiling, j the top 4 bits of the fraction f = k − (−d·log2 e), g the
// rest times ln 2, exp(g) by a 10-term Taylor series in Q62.
func expFxInt(d float32) uint64 {
	a := uint64(-d * (1 << 52)) // exact in float32: a power-of-two scale
	y := mulShift(a, 0x5c551d94ae0bf85e, 62)
	k := (y + (1<<52 - 1)) >> 52
	f := k<<52 - y
	g := mulShift(f&(1<<48-1), 0x2c5c85fdf473de6b, 52)
	r := sampleExpTaylor[9]
	for i := 8; i >= 0; i-- {
		r = sampleExpTaylor[i] + mulShift(r, g, 62)
	}
	r = mulShift(r, sampleExp2Tab[f>>48], 62)
	sh := 19 + uint(k)
	if sh >= 64 {
		return 0
	}
	return (r + 1<<(sh-1)) >> sh
}

// SampleFrac is floor(a·f) for f in [0, 1), f taken to 32 fraction bits:
// the top-p cut's target, topP of the whole mass.
func SampleFrac(a uint64, f float32) uint64 {
	k := uint64(math.RoundToEven(float64(max(f, 0) * (1 << 32))))
	return (a>>32)*k + ((a&0xffffffff)*k)>>32
}

// SampleMul24 is floor(a·u24 / 2^24) for u24 < 2^24: the draw's target,
// the uniform number (Uniform24) of the kept mass.
func SampleMul24(a uint64, u24 uint32) uint64 {
	k := uint64(u24)
	return (a>>24)*k + ((a&0xffffff)*k)>>24
}

// SampleMinPFx is the least mass min-p keeps (minP of the top token's,
// which is 1): ceil(minP·2^43), minP capped at 2; 0 when min-p is off.
func SampleMinPFx(minP float32) uint64 {
	if !(minP > 0) {
		return 0
	}
	return uint64(math.Ceil(float64(min(minP, 2) * (1 << 43))))
}

// Uniform24 is Uniform(seed, step)·2^24, the integer the kernels draw with.
func Uniform24(seed, step uint64) uint32 {
	z := seed + (step+1)*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	z ^= z >> 31
	return uint32(z >> 40)
}
