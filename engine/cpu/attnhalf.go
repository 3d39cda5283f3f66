package cpu

// keyScoresF16 sets s[j] = scale·(q·k_j) for the f16 keys k_j =
// k[j·ps:j·ps+len(q)]: a single-query attention's scores over a run of
// keys in one call (decode attends over an f16 cache; one call per key
// through a function value cost more than the dot products themselves).
// amd64 replaces it with keyScoresF16Fast.
var keyScoresF16 = keyScoresF16Generic

func keyScoresF16Generic(s, q []float32, k []uint16, ps int, scale float32) {
	lut := f16Table
	for j := range s {
		kj := k[j*ps : j*ps+len(q)]
		var d0, d1 float32
		i := 0
		for ; i+2 <= len(q); i += 2 {
			d0 += q[i] * lut[kj[i]]
			d1 += q[i+1] * lut[kj[i+1]]
		}
		if i < len(q) {
			d0 += q[i] * lut[kj[i]]
		}
		s[j] = (d0 + d1) * scale
	}
}

// addValuesF16 adds p[j] times the f16 value v[j·ps:j·ps+len(o)] to o, in
// order of j; amd64 replaces it with addValuesF16Fast (the output stays in
// registers over all keys).
var addValuesF16 = addValuesF16Generic

func addValuesF16Generic(o, p []float32, v []uint16, ps int) {
	for j, pj := range p {
		axpyHalfGeneric(o, pj, v[j*ps:j*ps+len(o)])
	}
}

// keyScores and addValues run the block kernels of the cache's type on
// the keys or values that start at element off, ps apart.
func keyScores(k typed, off, ps int, s, q []float32, scale float32) {
	if k.h != nil {
		keyScoresF16(s, q, k.h[off:], ps, scale)
	} else {
		keyScoresF32(s, q, k.f[off:], ps, scale)
	}
}

func addValues(o, p []float32, v typed, off, ps int) {
	if v.h != nil {
		addValuesF16(o, p, v.h[off:], ps)
	} else {
		addValuesF32(o, p, v.f[off:], ps)
	}
}
