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
	axpySplit(o, p, v, axpyF32AVX2, axpyF32Generic)
}

func axpyHalfFast(o []float32, p float32, v []uint16) {
	axpySplit(o, p, v, axpyF16AVX2, axpyHalfGeneric)
}

// axpySplit runs the assembly on whole groups of 8 and the portable loop
// on the tail. It is inlined into each caller, where the tail loop is
// inlined too and the assembly is one call of a known function per head
// row (BenchmarkAxpy: no slower than the two hand-written copies).
func axpySplit[V float32 | uint16](o []float32, p float32, v []V, asm func(o *float32, v *V, n int, p float32), tail func([]float32, float32, []V)) {
	v = v[:len(o)]
	main := len(o) &^ 7
	if main > 0 {
		asm(&o[0], &v[0], main, p)
	}
	tail(o[main:], p, v[main:])
}
