package cpu

//go:noescape
func axpyF32AVX2(o, v *float32, n int, p float32)

//go:noescape
func axpyF16AVX2(o *float32, v *uint16, n int, p float32)

func init() {
	if hasAVX2 {
		axpyF32, axpyHalf = axpyF32Fast, axpyHalfFast
	}
}

func axpyF32Fast(o []float32, p float32, v []float32) {
	v = v[:len(o)]
	main := len(o) &^ 7
	if main > 0 {
		axpyF32AVX2(&o[0], &v[0], main, p)
	}
	axpyF32Generic(o[main:], p, v[main:])
}

func axpyHalfFast(o []float32, p float32, v []uint16) {
	v = v[:len(o)]
	main := len(o) &^ 7
	if main > 0 {
		axpyF16AVX2(&o[0], &v[0], main, p)
	}
	axpyHalfGeneric(o[main:], p, v[main:])
}
