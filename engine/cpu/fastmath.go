package cpu

import "math"

// exp32 is e^x in float32 to within a few ulp, several times faster than
// math.Exp: the softmaxes of attention evaluate it for every score, which
// made it the largest cost of encoder attention.
//
// x = n·ln2 + r with |r| <= ln2/2 (ln2 split in two for exactness), e^r by
// its degree-7 Taylor polynomial (truncation error < 1e-9), and 2^n put
// into the exponent bits. Results below the normal range flush to zero.
func exp32(x float32) float32 {
	switch {
	case x != x:
		return x
	case x > 88.72283:
		return float32(math.Inf(1))
	case x < -87.33654:
		return 0
	}
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693359375
		ln2lo = -2.12194440e-4
	)
	// round to nearest by the 1.5·2^23 trick (math.Floor is a call on
	// baseline amd64)
	const magic = 12582912
	n := (x*log2e + magic) - magic
	r := x - n*ln2hi - n*ln2lo
	p := float32(1.0 / 5040)
	p = p*r + 1.0/720
	p = p*r + 1.0/120
	p = p*r + 1.0/24
	p = p*r + 1.0/6
	p = p*r + 0.5
	p = p*r + 1
	p = p*r + 1
	ni := int32(n)
	if ni < -126 { // x is near the bottom: scale in two steps
		return p * math.Float32frombits(uint32(ni+126+127)<<23) * math.Float32frombits(1<<23)
	}
	if ni > 127 {
		return p * 2 * math.Float32frombits(uint32(ni-1+127)<<23)
	}
	return p * math.Float32frombits(uint32(ni+127)<<23)
}

// maxRow is maxScaled; amd64 replaces it with maxScaledFast.
var maxRow = maxScaled

// maxScaled is the largest of scale·s[i] (s non-empty; NaNs are skipped
// unless all are NaN). Plain comparisons: the builtin max's NaN and
// signed-zero handling made it the slowest part of the softmaxes.
func maxScaled(s []float32, scale float32) float32 {
	mx := s[0] * scale
	for _, v := range s[1:] {
		if t := v * scale; t > mx {
			mx = t
		}
	}
	return mx
}
