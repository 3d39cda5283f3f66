package cpu

// halfRowF16C converts x[i] for i < n (a multiple of 8) with VCVTPS2PH,
// rounding to nearest even as FP32ToFP16 does (overflow to infinity,
// underflow through the subnormals to signed zero). It stops before the
// first group of eight holding a NaN, whose payload F16C keeps and
// FP32ToFP16 drops, and returns how many it did.
//
//go:noescape
func halfRowF16C(h *uint16, x *float32, n int) int

func init() {
	if hasAVX2 { // every AVX2 CPU has F16C (attnhalf_amd64.s relies on it too)
		halfRow = halfRowFast
	}
}

func halfRowFast(h []uint16, x []float32) {
	h = h[:len(x)]
	main := len(x) &^ 7
	for i := 0; i < main; {
		i += halfRowF16C(&h[i], &x[i], main-i)
		if i < main { // a group with a NaN
			halfRowGeneric(h[i:i+8], x[i:i+8])
			i += 8
		}
	}
	halfRowGeneric(h[main:], x[main:])
}
