package cpu

import (
	"github.com/harkapp/hark/engine/ggml"
	"golang.org/x/sys/cpu"
)

// The VNNI kernels compute rows8 groups of eight weight rows, rb bytes
// apart, against one Q8_0 activation row into out[0:8·rows8]; nb > 0.

//go:noescape
func dotQ4_0VNNI(w, x *byte, nb, rows8, rb int, out *float32)

//go:noescape
func dotQ5_0VNNI(w, x *byte, nb, rows8, rb int, out *float32)

//go:noescape
func dotQ8_0VNNI(w, x *byte, nb, rows8, rb int, out *float32)

// The packed kernels compute groups groups of eight rows from their
// packed copy (repack.go) into out[0:8·groups]; nb, groups > 0.

//go:noescape
func dotQ4_0VNNIP(w, x *byte, nb, groups int, out *float32)

//go:noescape
func dotQ5_0VNNIP(w, x *byte, nb, groups int, out *float32)

//go:noescape
func dotQ8_0VNNIP(w, x *byte, nb, groups int, out *float32)

// dotQ8_0VNNIPX is dotQ8_0VNNIP against the activation row as prepQ8_0X
// prepares it, bit for bit.
//
//go:noescape
func dotQ8_0VNNIPX(w, xp *byte, nb, groups int, out *float32)

// prepQ8_0XVNNI is prepQ8_0XGo in AVX-512 VNNI and F16C, byte for byte
// for every scale that is not a NaN (F16C quiets signalling NaNs).
//
//go:noescape
func prepQ8_0XVNNI(x, dst *byte, nb int)

// prepXVNNI picks prepQ8_0XVNNI over the Go version in prepQ8_0X (a
// variable for the tests, which run both).
var prepXVNNI = true

// prepQ8_0X prepares x's nb Q8_0 blocks for dotQ8_0VNNIPX. It runs on the
// caller between two products of a decode step, while the other workers
// wait for the next job: at 16 workers the Go version was 0.7% of all
// threads' time and about a tenth of the caller's (BENCHMARKS.md, round 31).
func prepQ8_0X(x []byte, nb int, dst []byte) {
	if !prepXVNNI || nb <= 0 {
		prepQ8_0XGo(x, nb, dst)
		return
	}
	_, _ = x[nb*q8_0Bytes-1], dst[nb*q8PrepBytes-1]
	prepQ8_0XVNNI(&x[0], &dst[0], nb)
}

// hasVNNI gates the AVX-512 VNNI kernels. x/sys/cpu reports the AVX-512
// flags only when the OS saves the ZMM and mask registers; the kernels use
// 512-bit VPDPBUSD (VNNI), byte masks (BW) and 128/256-bit EVEX forms (VL).
var hasVNNI = hasAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW &&
	cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI

// vnniKind picks the kernel; a switch rather than a func value keeps the
// remainder rows' stack buffer off the heap.
type vnniKind int

const (
	vnniQ4_0 vnniKind = iota
	vnniQ5_0
	vnniQ8_0
)

func (v vnniKind) call(w, x *byte, nb, rows8, rb int, out *float32) {
	switch v {
	case vnniQ4_0:
		dotQ4_0VNNI(w, x, nb, rows8, rb, out)
	case vnniQ5_0:
		dotQ5_0VNNI(w, x, nb, rows8, rb, out)
	default:
		dotQ8_0VNNI(w, x, nb, rows8, rb, out)
	}
}

func (v vnniKind) typeSize() int {
	return [...]int{18, 22, 34}[v]
}

// rows runs a row run: groups of eight, then each leftover row as a group
// of eight copies of itself (rb = 0; row runs are mostly multiples of 8).
func (v vnniKind) rows(w []byte, rb int, x []byte, nb int, out []float32) {
	if !checkRun(w, rb, x, nb, v.typeSize(), q8_0Bytes, len(out)) {
		clear(out)
		return
	}
	n8 := len(out) / 8
	if n8 > 0 {
		v.call(&w[0], &x[0], nb, n8, rb, &out[0])
	}
	for r := 8 * n8; r < len(out); r++ {
		var o [8]float32
		v.call(&w[r*rb], &x[0], nb, 1, 0, &o[0])
		out[r] = o[0]
	}
}

func rowsQ4_0VNNI(w []byte, rb int, x []byte, nb int, out []float32) {
	vnniQ4_0.rows(w, rb, x, nb, out)
}

func rowsQ5_0VNNI(w []byte, rb int, x []byte, nb int, out []float32) {
	vnniQ5_0.rows(w, rb, x, nb, out)
}

func rowsQ8_0VNNI(w []byte, rb int, x []byte, nb int, out []float32) {
	vnniQ8_0.rows(w, rb, x, nb, out)
}

// packedVNNI runs a packed kernel over len(out)/8 groups of ts-byte blocks
// after one bounds check.
func packedVNNI(asm func(w, x *byte, nb, groups int, out *float32), ts int,
	p []byte, nb int, x []byte, out []float32) {
	g := len(out) / packGroup
	if g == 0 || nb == 0 {
		clear(out)
		return
	}
	_, _, _ = p[g*packGroup*nb*ts-1], x[nb*q8_0Bytes-1], out[g*packGroup-1]
	asm(&p[0], &x[0], nb, g, &out[0])
}

func packedQ8_0VNNI(p []byte, nb int, x []byte, out []float32) {
	packedVNNI(dotQ8_0VNNIP, 34, p, nb, x, out)
}

// packedQ8_0VNNIX is packedQ8_0VNNI with xp from prepQ8_0X: the per-block
// activation work done once per product instead of once per group of
// eight rows (a 576-row product has 72 groups).
func packedQ8_0VNNIX(p []byte, nb int, xp []byte, out []float32) {
	g := len(out) / packGroup
	if g == 0 || nb == 0 {
		clear(out)
		return
	}
	_, _, _ = p[g*packGroup*nb*34-1], xp[nb*q8PrepBytes-1], out[g*packGroup-1]
	dotQ8_0VNNIPX(&p[0], &xp[0], nb, g, &out[0])
}

func packedQ4_0VNNI(p []byte, nb int, x []byte, out []float32) {
	packedVNNI(dotQ4_0VNNIP, 18, p, nb, x, out)
}

func packedQ5_0VNNI(p []byte, nb int, x []byte, out []float32) {
	packedVNNI(dotQ5_0VNNIP, 22, p, nb, x, out)
}

// useVNNI installs the VNNI kernels (on) or the AVX2 ones for the types
// that have both, row products and quantized GEMM alike; tests use it to
// run each path. Not safe while a matmul is running.
func useVNNI(on bool) {
	useQGemmVNNI(on)
	if on && hasVNNI {
		setRows(ggml.Q4_0, rowsQ4_0VNNI)
		setRows(ggml.Q5_0, rowsQ5_0VNNI)
		setRows(ggml.Q8_0, rowsQ8_0VNNI)
		kinds[ggml.Q8_0].dotPacked = packedQ8_0VNNI
		kinds[ggml.Q8_0].dotPackedX, kinds[ggml.Q8_0].prepPacked = nil, nil
		if packPrepX {
			kinds[ggml.Q8_0].dotPackedX, kinds[ggml.Q8_0].prepPacked = packedQ8_0VNNIX, prepQ8_0X
		}
		kinds[ggml.Q4_0].dotPacked = packedQ4_0VNNI
		kinds[ggml.Q5_0].dotPacked = packedQ5_0VNNI
		kinds[ggml.Q8_0].dotQRowsM = nil // no multi-row VNNI kernel equals its rows yet
		kinds[ggml.Q4_0].dotQRowsM = nil
		return
	}
	for _, t := range []ggml.Type{ggml.Q8_0, ggml.Q4_0, ggml.Q5_0} {
		kinds[t].dotPacked, kinds[t].dotPackedX, kinds[t].prepPacked = nil, nil, nil
	}
	setRows(ggml.Q8_0, rowsQ8_0Fast)
	kinds[ggml.Q8_0].dotQRowsM = rowsMQ8_0Fast
	setRows(ggml.Q4_0, rowsQ4_0Fast)
	withRowsM(kinds[ggml.Q4_0], rowsMQ4_0Fast, prepQ4_0, prepQ4_0N)
	setRows(ggml.Q5_0, rowsQ5_0Fast)
}
