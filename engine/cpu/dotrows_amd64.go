package cpu

// The kernels compute rows weight rows against 4, 3 or 2 activation rows
// (dotrows_amd64.s); nb, rows > 0.

//go:noescape
func dotQ8_0AVX2M4(w, x *byte, xs *float32, nb, rows, rb, xrb int, out *float32, ldo int)

//go:noescape
func dotQ8_0AVX2M3(w, x *byte, xs *float32, nb, rows, rb, xrb int, out *float32, ldo int)

//go:noescape
func dotQ8_0AVX2M2(w, x *byte, xs *float32, nb, rows, rb, xrb int, out *float32, ldo int)

// rowsMQ8_0Fast is rowsMFunc on the AVX2 kernels, equal bit for bit to
// rowsQ8_0Fast row by row; one activation row is rowsQ8_0Fast itself.
func rowsMQ8_0Fast(w []byte, rb, rows int, x []byte, xrb int, xs []float32, m, nb int, out []float32, ldo int) {
	if rows <= 0 || m <= 0 {
		return
	}
	if m == 1 || nb == 0 {
		for i := range m {
			rowsQ8_0Fast(w, rb, x[i*xrb:], nb, out[i*ldo:i*ldo+rows])
		}
		return
	}
	// one check of every operand's extent for the assembly
	_, _, _, _ = w[(rows-1)*rb+nb*q8_0Bytes-1], x[(m-1)*xrb+nb*q8_0Bytes-1], xs[m*nb-1], out[(m-1)*ldo+rows-1]
	switch m {
	case 2:
		dotQ8_0AVX2M2(&w[0], &x[0], &xs[0], nb, rows, rb, xrb, &out[0], ldo)
	case 3:
		dotQ8_0AVX2M3(&w[0], &x[0], &xs[0], nb, rows, rb, xrb, &out[0], ldo)
	case 4:
		dotQ8_0AVX2M4(&w[0], &x[0], &xs[0], nb, rows, rb, xrb, &out[0], ldo)
	default:
		panic("cpu: rowsMQ8_0Fast takes 1 to rowsM activation rows")
	}
}
