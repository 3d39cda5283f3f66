package cpu

// kvSpan is a run of n keys (or values) of a cache, ps elements apart from
// element off: a contiguous cache's visible keys are one span, a paged
// cache's one per block they cover.
type kvSpan struct{ off, n int }

// keyScoresF16 sets s[j] = scale·(q·k_j) for the f16 keys of spans, in
// order (k_j = k[off+i·ps : off+i·ps+len(q)] for the i-th key of a span):
// a single-query attention's scores over all its keys in one call (one
// call per key through a function value, or per 16-position block of a
// paged cache, cost more than the dot products themselves). amd64
// replaces it with keyScoresF16Fast.
var keyScoresF16 = keyScoresF16Generic

func keyScoresF16Generic(s, q []float32, k []uint16, spans []kvSpan, ps int, scale float32) {
	lut := f16Table
	j := 0
	for _, sp := range spans {
		for i := range sp.n {
			kj := k[sp.off+i*ps : sp.off+i*ps+len(q)]
			var d0, d1 float32
			c := 0
			for ; c+2 <= len(q); c += 2 {
				d0 += q[c] * lut[kj[c]]
				d1 += q[c+1] * lut[kj[c+1]]
			}
			if c < len(q) {
				d0 += q[c] * lut[kj[c]]
			}
			s[j] = (d0 + d1) * scale
			j++
		}
	}
}

// addValuesF16 adds p[j] times the j-th f16 value of spans to o, in order
// of j; amd64 replaces it with addValuesF16Fast (the output stays in
// registers over all values).
var addValuesF16 = addValuesF16Generic

func addValuesF16Generic(o, p []float32, v []uint16, spans []kvSpan, ps int) {
	j := 0
	for _, sp := range spans {
		for i := range sp.n {
			axpyHalfGeneric(o, p[j], v[sp.off+i*ps:sp.off+i*ps+len(o)])
			j++
		}
	}
}
