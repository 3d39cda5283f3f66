package cpu

// siluMulRow sets o[i] = silu(a[i])·b[i]: the gated FFN's activation,
// which a decode step computes on the caller, over the FFN's whole width,
// while the other workers wait for the down product (issue #37). amd64
// replaces it with eight lanes at a time of the same float32 operations
// (silumul_amd64.go).
var siluMulRow = siluMulRowGeneric

func siluMulRowGeneric(o, a, b []float32) {
	b = b[:len(a)]
	o = o[:len(a)]
	for i, v := range a {
		o[i] = silu(v) * b[i]
	}
}
