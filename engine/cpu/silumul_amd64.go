package cpu

// siluMulAVX2 computes o[i] = silu(a[i])·b[i] for i < n (a multiple of 8)
// with silu's and exp32's float32 operations in their order, unfused
// (the Go compiler does not fuse them for amd64's baseline): the same
// bits. It stops before the first group of eight holding a value outside
// [-87, 87] or NaN (exp32's special cases) and returns how many it did.
//
//go:noescape
func siluMulAVX2(o, a, b *float32, n int) int

func init() {
	if hasAVX2 {
		siluMulRow = siluMulRowFast
	}
}

func siluMulRowFast(o, a, b []float32) {
	b = b[:len(a)]
	o = o[:len(a)]
	main := len(a) &^ 7
	for i := 0; i < main; {
		i += siluMulAVX2(&o[i], &a[i], &b[i], main-i)
		if i < main { // a group with a special case
			siluMulRowGeneric(o[i:i+8], a[i:i+8], b[i:i+8])
			i += 8
		}
	}
	siluMulRowGeneric(o[main:], a[main:], b[main:])
}
