package cpu

//go:noescape
func keyScoresF16AVX2(q *float32, k *uint16, s *float32, nkeys, ps, hd int, scale float32)

//go:noescape
func addValuesF16AVX2(o *float32, v *uint16, p *float32, nkeys, ps, hd int)

func init() {
	if hasAVX2 {
		keyScoresF16, addValuesF16 = keyScoresF16Fast, addValuesF16Fast
	}
}

// keyScoresF16Fast runs the assembly on groups of 4 keys where the head
// dimension is a multiple of 8, and the last 1-3 keys through the f16
// rows kernel where it is a multiple of 32 (a paged block's span leaves
// such a tail at the sequence's end), the portable loop on the rest.
func keyScoresF16Fast(s, q []float32, k []uint16, ps int, scale float32) {
	hd := len(q)
	main := len(s) &^ 3
	if hd%8 != 0 || len(s) == 0 {
		keyScoresF16Generic(s, q, k, ps, scale)
		return
	}
	_ = k[(len(s)-1)*ps+hd-1] // the keys the assembly reads
	if main > 0 {
		keyScoresF16AVX2(&q[0], &k[0], &s[0], main, ps, hd, scale)
	}
	if main == len(s) {
		return
	}
	if hd%32 != 0 {
		keyScoresF16Generic(s[main:], q, k[main*ps:], ps, scale)
		return
	}
	tail := s[main:]
	dotF16RowsAVX2(&k[main*ps], 2*ps, &q[0], hd, len(tail), &tail[0])
	for j := range tail {
		tail[j] *= scale
	}
}

// addValuesF16Fast runs the assembly where the head dimension is a
// multiple of 32, the portable loop otherwise.
func addValuesF16Fast(o, p []float32, v []uint16, ps int) {
	hd := len(o)
	if hd%32 != 0 || hd == 0 || len(p) == 0 {
		addValuesF16Generic(o, p, v, ps)
		return
	}
	_ = v[(len(p)-1)*ps+hd-1] // the values the assembly reads
	addValuesF16AVX2(&o[0], &v[0], &p[0], len(p), ps, hd)
}
