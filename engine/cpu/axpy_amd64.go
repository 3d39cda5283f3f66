package cpu

//go:noescape
func axpyF32AVX2(o, v *float32, n int, p float32)

func init() {
	if hasAVX2 {
		axpyF32 = axpyF32Fast
	}
}

func axpyF32Fast(o []float32, p float32, v []float32) {
	axpySplit(o, p, v, axpyF32AVX2, axpyF32Generic)
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
