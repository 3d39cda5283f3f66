package cpu

// Multi-row products. A batch decode step (engine/llm's Batch below
// MatMulRows rows) multiplies each weight matrix by a few activation rows,
// one per sequence. Running the single-row kernel once per activation row
// repeats, for every row, all the work on the weight block (its loads,
// signs, scale) and runs one FMA chain at a time, so a step of four rows
// cost four steps of one. kind.dotQRowsM takes up to rowsM activation
// rows at once: each weight block is decoded once for all of them. Its
// per-row arithmetic is the single-row kernel's (same order, same
// rounding), so a row's result does not depend on the rows beside it and
// batched decoding stays equal to sequential decoding.

// rowsM is the most activation rows one dotQRowsM call takes; the row
// task runs more in groups of rowsM.
const rowsM = 4

// rowsMFunc computes, for i < m (1..rowsM) and r < rows,
//
//	out[i*ldo+r] = dotQ(weight row r, activation row i)
//
// with weight rows rb bytes apart in w and activation rows xrb bytes
// apart in x, nb blocks each, and xs what the kind's prepM made of them
// (row i's at xs[i*nb*prepN:]); out[i*ldo+r] equals what dotQRows writes
// for row r against activation row i, bit for bit.
type rowsMFunc func(w []byte, rb, rows int, x []byte, xrb int, xs []float32, m, nb int, out []float32, ldo int)

// rowsFMFunc computes, for i < m (1..rowsM), out[i] = dotF(w, activation
// row i) with the float activation rows ldx elements apart in x, k
// elements each, equal to dotF bit for bit.
type rowsFMFunc func(w []byte, x []float32, k, ldx, m int, out []float32)

// withRowsM gives a kind its portable multi-row kernel and its
// preparation (the kinds table; SIMD init replaces them with its own, or
// none).
func withRowsM(kd *kind, f rowsMFunc, prep func(x []byte, nb int, dst []float32), n int) *kind {
	kd.dotQRowsM, kd.prepM, kd.prepN = f, prep, n
	return kd
}

// prepScales is the Q8_0 activation format's preparation: each block's
// f16 scale d as a float, so the kernels broadcast a float instead of
// converting a half for every weight row.
func prepScales(x []byte, nb int, dst []float32) {
	for b := range nb {
		dst[b] = f16At(x[b*q8_0Bytes:])
	}
}

// rowsMQ8_0Generic is dotQ8_0Generic for m activation rows: each weight
// block's codes are widened and its scale converted once.
func rowsMQ8_0Generic(w []byte, rb, rows int, x []byte, xrb int, xs []float32, m, nb int, out []float32, ldo int) {
	var sums [rowsM]float32
	var wq [32]int32
	for r := range rows {
		wr := w[r*rb : r*rb+nb*q8_0Bytes]
		sums = [rowsM]float32{}
		for b := range nb {
			wb := wr[b*q8_0Bytes : (b+1)*q8_0Bytes]
			for j := range wq {
				wq[j] = int32(int8(wb[2+j]))
			}
			dw := f16At(wb)
			for i := range m {
				xb := x[i*xrb+b*q8_0Bytes : i*xrb+(b+1)*q8_0Bytes]
				var s int32
				for j, q := range wq {
					s += q * int32(int8(xb[2+j]))
				}
				sums[i] += float32(s) * (dw * xs[i*nb+b])
			}
		}
		for i := range m {
			out[i*ldo+r] = sums[i]
		}
	}
}

// mRows computes weight rows [lo, hi) against every activation row with
// dotQRowsM: a run of run weight rows (which stays in L1) against rowsM
// activation rows at a time, the results through buf (rowsM·run floats)
// and the activations' preparation through xs (m·nb·prepN floats).
func (a *mulArgs) mRows(lo, hi, run int, buf, xs []float32) {
	nb, pn := a.k/a.kd.blockSize, a.kd.prepN
	for i := range a.m {
		a.kd.prepM(a.act[i*a.actRB:(i+1)*a.actRB], nb, xs[i*nb*pn:(i+1)*nb*pn])
	}
	for j0 := lo; j0 < hi; j0 += run {
		j1 := min(hi, j0+run)
		n := j1 - j0
		for i0 := 0; i0 < a.m; i0 += rowsM {
			g := min(rowsM, a.m-i0)
			a.kd.dotQRowsM(a.w[j0*a.rb:j1*a.rb], a.rb, n, a.act[i0*a.actRB:], a.actRB, xs[i0*nb*pn:], g, nb, buf, n)
			for i := range g {
				a.store(i0+i, j0, buf[i*n:(i+1)*n])
			}
		}
	}
}

// scaleBuf is m·nb·prepN floats per worker for mRows' activation
// preparation, or nil where a's product does not take the multi-row
// kernels.
func (mm *MatMul) scaleBuf(a *mulArgs) []float32 {
	if a.m <= 1 || a.kd.dotQRowsM == nil || a.packed != nil || mm.floatActs {
		return nil
	}
	if need := mm.pool.Workers() * a.m * (a.k / a.kd.blockSize) * a.kd.prepN; len(mm.xsc) < need {
		mm.xsc = make([]float32, need)
	}
	return mm.xsc
}

// mRowsF is mRows for float weights (kind.dotFM): each weight row against
// rowsM activation rows at a time, the results through buf.
func (a *mulArgs) mRowsF(lo, hi int, buf []float32) {
	for j := lo; j < hi; j++ {
		wr := a.w[j*a.rb : (j+1)*a.rb]
		for i0 := 0; i0 < a.m; i0 += rowsM {
			g := min(rowsM, a.m-i0)
			d := buf[:g]
			a.kd.dotFM(wr, a.x[i0*a.ldx:], a.k, a.ldx, g, d)
			for i := range g {
				a.store(i0+i, j, d[i:i+1])
			}
		}
	}
}
