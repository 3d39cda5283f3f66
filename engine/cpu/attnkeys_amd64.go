package cpu

//go:noescape
func keyScoresF32AVX2(q, k, s *float32, nkeys, ps, hd int, scale float32)

//go:noescape
func addValuesF32AVX2(o, v, p *float32, nkeys, ps, hd int)

func init() {
	if hasAVX2 {
		keyScoresF32, addValuesF32 = keyScoresF32Fast, addValuesF32Fast
	}
}

// keyScoresF32Fast runs the assembly on groups of 4 keys where the head
// dimension is a multiple of 8, the portable loop on the rest.
func keyScoresF32Fast(s, q, k []float32, ps int, scale float32) {
	hd := len(q)
	main := len(s) &^ 3
	if hd%8 != 0 || main == 0 {
		keyScoresF32Generic(s, q, k, ps, scale)
		return
	}
	_ = k[(main-1)*ps+hd-1] // the keys the assembly reads
	keyScoresF32AVX2(&q[0], &k[0], &s[0], main, ps, hd, scale)
	if main < len(s) {
		keyScoresF32Generic(s[main:], q, k[main*ps:], ps, scale)
	}
}

// addValuesF32Fast runs the assembly where the head dimension is a
// multiple of 32, the portable loop otherwise.
func addValuesF32Fast(o, p, v []float32, ps int) {
	hd := len(o)
	if hd%32 != 0 || hd == 0 || len(p) == 0 {
		addValuesF32Generic(o, p, v, ps)
		return
	}
	_ = v[(len(p)-1)*ps+hd-1] // the values the assembly reads
	addValuesF32AVX2(&o[0], &v[0], &p[0], len(p), ps, hd)
}
