package cpu

//go:noescape
func keyScoresF16AVX2(q *float32, k *uint16, spans *kvSpan, nspans int, s *float32, ps, hd int, scale float32)

//go:noescape
func addValuesF16AVX2(o *float32, v *uint16, spans *kvSpan, nspans int, p *float32, ps, hd int)

func init() {
	if hasAVX2 {
		keyScoresF16, addValuesF16 = keyScoresF16Fast, addValuesF16Fast
	}
}

// keyScoresF16Fast runs the assembly where the head dimension is a
// multiple of 8, the portable loop otherwise.
func keyScoresF16Fast(s, q []float32, k []uint16, spans []kvSpan, ps int, scale float32) {
	hd := len(q)
	if hd%8 != 0 || hd == 0 {
		keyScoresF16Generic(s, q, k, spans, ps, scale)
		return
	}
	if n := checkSpans(k, spans, ps, hd); n > 0 {
		_ = s[n-1]
		keyScoresF16AVX2(&q[0], &k[0], &spans[0], len(spans), &s[0], ps, hd, scale)
	}
}

// addValuesF16Fast runs the assembly where the head dimension is a
// multiple of 32, the portable loop otherwise.
func addValuesF16Fast(o, p []float32, v []uint16, spans []kvSpan, ps int) {
	hd := len(o)
	if hd%32 != 0 || hd == 0 {
		addValuesF16Generic(o, p, v, spans, ps)
		return
	}
	if n := checkSpans(v, spans, ps, hd); n > 0 {
		_ = p[n-1]
		addValuesF16AVX2(&o[0], &v[0], &spans[0], len(spans), &p[0], ps, hd)
	}
}

// checkSpans panics unless every key of spans lies in c (the assembly
// reads them unchecked), and returns how many there are.
func checkSpans(c []uint16, spans []kvSpan, ps, hd int) int {
	n := 0
	for _, sp := range spans {
		if sp.n < 0 {
			panic("cpu: negative attention span")
		}
		if sp.n > 0 {
			_ = c[sp.off : sp.off+(sp.n-1)*ps+hd]
		}
		n += sp.n
	}
	return n
}
