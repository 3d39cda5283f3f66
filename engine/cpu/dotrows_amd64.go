package cpu

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/harkapp/hark/engine/ggml"
)

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

// The float kernels compute one weight row against two activation rows
// (ldx elements apart), n > 0 a multiple of 32 (dotrows_amd64.s).

//go:noescape
func dotF16AVX2M2(w *uint16, x *float32, ldx, n int, out *float32)

//go:noescape
func dotF32AVX2M2(w, x *float32, ldx, n int, out *float32)

func init() {
	if hasAVX2 {
		kinds[ggml.F16].dotFM = rowsFMF16Fast
		kinds[ggml.F32].dotFM = rowsFMF32Fast
	}
}

// rowsFMF16Fast is rowsFMFunc for f16 weights, equal bit for bit to
// dotF16Fast row by row.
func rowsFMF16Fast(w []byte, x []float32, k, ldx, m int, out []float32) {
	rowsFMFast(true, w, x, k, ldx, m, out)
}

// rowsFMF32Fast is rowsFMFunc for f32 weights, equal bit for bit to
// dotF32Fast row by row.
func rowsFMF32Fast(w []byte, x []float32, k, ldx, m int, out []float32) {
	rowsFMFast(false, w, x, k, ldx, m, out)
}

// rowsFMFast drives the f16 (or f32) two-row kernel: activation rows in
// pairs, an odd last one through the single-row dot; the elements past
// the last multiple of 32 are added as the single-row dot adds them. The
// kernels are called directly, not through a func value, so the sums
// stay on the stack.
func rowsFMFast(f16 bool, w []byte, x []float32, k, ldx, m int, out []float32) {
	main := k &^ 31
	var wf []float32
	if f16 {
		w = w[:2*k]
	} else {
		wf = f32View(w, k)
	}
	at := func(e int) float32 {
		if f16 {
			return f16Table[binary.LittleEndian.Uint16(w[2*e:])]
		}
		return wf[e]
	}
	i := 0
	for ; i+2 <= m; i += 2 {
		x0, x1 := x[i*ldx:i*ldx+k], x[(i+1)*ldx:(i+1)*ldx+k]
		var s [2]float32
		switch {
		case main == 0:
		case f16:
			dotF16AVX2M2((*uint16)(f16Ptr(w)), &x0[0], ldx, main, &s[0])
		default:
			dotF32AVX2M2(&wf[0], &x0[0], ldx, main, &s[0])
		}
		for e := main; e < k; e++ {
			v := at(e)
			s[0] += v * x0[e]
			s[1] += v * x1[e]
		}
		out[i], out[i+1] = s[0], s[1]
	}
	if i < m {
		if f16 {
			out[i] = dotF16Fast(w, x[i*ldx:i*ldx+k])
		} else {
			out[i] = dotF32Fast(wf, x[i*ldx:i*ldx+k])
		}
	}
}

//go:noescape
func dotQ4_0AVX2M4(w, xp *byte, np, rows, rb, xpr int, out *float32, ldo int)

// prepQ4_0N is prepQ4_0's floats a block: 128 bytes a pair of blocks.
const prepQ4_0N = 16

// prepQ4_0 prepares a Q8_0 activation row for dotQ4_0AVX2M4: for each
// pair of blocks A, B the registers dotQ4_0AVX2 builds from it (codes
// 0-15 of A then of B, codes 16-31 of A then of B, the int16 offsets
// 8·(x[2i]+x[2i+1]) of both halves summed as its VPMADDUBSW and VPADDW
// sum them (exact: |offset| ≤ 4064), the scales [dA×4 | dB×4]). An odd
// last block is not prepared (rowsMQ4_0Fast runs odd counts alone).
func prepQ4_0(x []byte, nb int, dst []float32) {
	d := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), 4*len(dst))
	for p := range nb / 2 {
		a, b, o := x[2*p*q8_0Bytes:], x[(2*p+1)*q8_0Bytes:], d[p*128:(p+1)*128]
		copy(o[0:16], a[2:18])
		copy(o[16:32], b[2:18])
		copy(o[32:48], a[18:34])
		copy(o[48:64], b[18:34])
		for i := range 16 {
			lo, hi := o[2*i:], o[32+2*i:]
			off := 8*(int16(int8(lo[0]))+int16(int8(lo[1]))) + 8*(int16(int8(hi[0]))+int16(int8(hi[1])))
			binary.LittleEndian.PutUint16(o[64+2*i:], uint16(off))
		}
		da, db := f16At(a), f16At(b)
		for i := range 4 {
			binary.LittleEndian.PutUint32(o[96+4*i:], math.Float32bits(da))
			binary.LittleEndian.PutUint32(o[112+4*i:], math.Float32bits(db))
		}
	}
}

// rowsMQ4_0Fast is rowsMFunc on dotQ4_0AVX2M4 (xs from prepQ4_0), equal
// bit for bit to rowsQ4_0Fast row by row: up to four activation rows a
// call, fewer, or an odd block count, through rowsQ4_0Fast row by row.
func rowsMQ4_0Fast(w []byte, rb, rows int, x []byte, xrb int, xs []float32, m, nb int, out []float32, ldo int) {
	if rows <= 0 || m <= 0 {
		return
	}
	if m < rowsM || nb%2 != 0 {
		for i := range m {
			rowsQ4_0Fast(w, rb, x[i*xrb:], nb, out[i*ldo:i*ldo+rows])
		}
		return
	}
	xpr := nb * prepQ4_0N * 4 // bytes a prepared row
	_, _, _ = w[(rows-1)*rb+nb*18-1], xs[(m*xpr)/4-1], out[(m-1)*ldo+rows-1]
	dotQ4_0AVX2M4(&w[0], (*byte)(unsafe.Pointer(&xs[0])), nb/2, rows, rb, xpr, &out[0], ldo)
}
