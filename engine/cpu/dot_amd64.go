package cpu

import (
	"encoding/binary"

	"github.com/harkapp/hark/engine/ggml"
	"golang.org/x/sys/cpu"
)

//go:noescape
func dotF32AVX2(a, b *float32, n int) float32

//go:noescape
func cvtF16AVX2(src *uint16, dst *float32, n int)

// The quantized kernels compute rows weight rows, rb bytes apart, against
// one activation row into out[0:rows]; nb (np for Q4_0: pairs) > 0.

//go:noescape
func dotQ8_0AVX2(w, x *byte, nb, rows, rb int, out *float32)

//go:noescape
func dotQ4_0AVX2(w, x *byte, np, rows2, rb int, out *float32)

//go:noescape
func dotQ5_0AVX2(w, x *byte, np, rows2, rb int, out *float32)

//go:noescape
func dotQ4KAVX2(w, x *byte, nb, rows, rb int, out *float32)

//go:noescape
func dotQ5KAVX2(w, x *byte, nb, rows, rb int, out *float32)

//go:noescape
func dotQ6KAVX2(w, x *byte, nb, rows, rb int, out *float32)

// hasAVX2 gates the assembly; without it the portable kernels stay. x/sys
// has no F16C flag; every AVX2+FMA CPU (Haswell, Piledriver and later) has F16C.
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

func init() {
	if !hasAVX2 {
		return
	}
	dotF32 = dotF32Fast
	dequantF16 = dequantF16Fast
	kinds[ggml.F16].dotF = dotF16Fast
	useVNNI(hasVNNI)
	setRows(ggml.Q4_K, rowsQ4KFast)
	setRows(ggml.Q5_K, rowsQ5KFast)
	setRows(ggml.Q6_K, rowsQ6KFast)
}

func dotF32Fast(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	main := n &^ 31
	var s float32
	if main > 0 {
		s = dotF32AVX2(&a[0], &b[0], main)
	}
	for i := main; i < n; i++ {
		s += a[i] * b[i]
	}
	return s
}

// dequantF16Fast widens f16 weight rows for GEMM tiles with F16C, bit-exact
// with ggml.Dequantize for every non-NaN half (F16C quiets signalling NaNs).
func dequantF16Fast(w []byte, out []float32) {
	n := len(out)
	w = w[:2*n]
	main := n &^ 31
	if main > 0 {
		cvtF16AVX2((*uint16)(f16Ptr(w)), &out[0], main)
	}
	for i := main; i < n; i++ {
		out[i] = f16Table[binary.LittleEndian.Uint16(w[2*i:])]
	}
}

func dotF16Fast(w []byte, x []float32) float32 {
	n := len(x)
	w = w[:2*n]
	main := n &^ 31
	var s float32
	if main > 0 {
		dotF16RowsAVX2((*uint16)(f16Ptr(w)), 0, &x[0], main, 1, &s)
	}
	for i := main; i < n; i++ {
		s += f16Table[binary.LittleEndian.Uint16(w[2*i:])] * x[i]
	}
	return s
}

// setRows installs a row-run kernel and the single-row dot built on it.
func setRows(t ggml.Type, rows func(w []byte, rb int, x []byte, nb int, out []float32)) {
	kd := kinds[t]
	kd.dotQRows = rows
	ts := kd.typeSize
	kd.dotQ = func(w, x []byte, nb int) float32 {
		var o [1]float32
		rows(w, nb*ts, x, nb, o[:])
		return o[0]
	}
}

// checkRun bounds-checks a row run once for the assembly.
func checkRun(w []byte, rb int, x []byte, nb, ts, xs, rows int) bool {
	if rows == 0 || nb == 0 {
		return false
	}
	_, _ = w[(rows-1)*rb+nb*ts-1], x[nb*xs-1]
	return true
}

// rowsAsm makes the row run of an assembly kernel that takes whole
// blocks (ts bytes a weight block, xs an activation block): one check of
// the run's bounds, then one call for all rows.
func rowsAsm(asm func(w, x *byte, nb, rows, rb int, out *float32), ts, xs int) func(w []byte, rb int, x []byte, nb int, out []float32) {
	return func(w []byte, rb int, x []byte, nb int, out []float32) {
		if !checkRun(w, rb, x, nb, ts, xs, len(out)) {
			clear(out)
			return
		}
		asm(&w[0], &x[0], nb, len(out), rb, &out[0])
	}
}

var (
	rowsQ8_0Fast = rowsAsm(dotQ8_0AVX2, 34, q8_0Bytes)
	rowsQ4KFast  = rowsAsm(dotQ4KAVX2, 144, q8KBytes)
	rowsQ5KFast  = rowsAsm(dotQ5KAVX2, 176, q8KBytes)
	rowsQ6KFast  = rowsAsm(dotQ6KAVX2, 210, q8KBytes)
)

// rowsQ4_0Fast: the assembly takes blocks in pairs and rows in pairs; an
// odd last row is run as a pair of itself (rb = 0), odd block counts (k an
// odd multiple of 32, rare) use the portable dot.
func rowsQ4_0Fast(w []byte, rb int, x []byte, nb int, out []float32) {
	rowsPaired(false, w, rb, x, nb, out)
}

func rowsQ5_0Fast(w []byte, rb int, x []byte, nb int, out []float32) {
	rowsPaired(true, w, rb, x, nb, out)
}

// rowsPaired drives the Q4_0 or (q5) Q5_0 kernel. The kernels are called
// directly, not through a func value, so the stack result stays on the stack.
func rowsPaired(q5 bool, w []byte, rb int, x []byte, nb int, out []float32) {
	generic, ts, asm := dotQ4_0Generic, 18, dotQ4_0AVX2
	if q5 {
		generic, ts, asm = dotQ5_0Generic, 22, dotQ5_0AVX2
	}
	if nb%2 != 0 {
		rowsGeneric(generic, w, rb, x, nb, out)
		return
	}
	if !checkRun(w, rb, x, nb, ts, q8_0Bytes, len(out)) {
		clear(out)
		return
	}
	if n2 := len(out) / 2; n2 > 0 {
		asm(&w[0], &x[0], nb/2, n2, rb, &out[0])
	}
	if r := len(out) - 1; r%2 == 0 {
		var o [2]float32
		if q5 {
			dotQ5_0AVX2(&w[r*rb], &x[0], nb/2, 1, 0, &o[0])
		} else {
			dotQ4_0AVX2(&w[r*rb], &x[0], nb/2, 1, 0, &o[0])
		}
		out[r] = o[0]
	}
}
