package cpu

import "github.com/harkapp/hark/engine/ggml"

// kind bundles what a matrix product needs to know about one weight type:
// its geometry, activation format and kernels. SIMD kernels replace the
// portable ones in kinds at init where the CPU has them.
type kind struct {
	id        int
	t         ggml.Type
	blockSize int // elements per weight block
	typeSize  int // bytes per weight block

	// Quantized types: x is quantized per row to actBytes per block.
	actBytes int
	dotQ     func(w, x []byte, nb int) float32
	// dotQRows computes len(out) consecutive weight rows, rb bytes apart,
	// against one activation row.
	dotQRows func(w []byte, rb int, x []byte, nb int, out []float32)
	// dotQRowsM, where set, is dotQRows for up to rowsM activation rows
	// at once, equal to it bit for bit (dotrows.go), from the activation
	// rows and what prepM makes of each, prepN floats a block.
	dotQRowsM rowsMFunc
	prepM     func(x []byte, nb int, dst []float32)
	prepN     int

	// dotPacked, where this CPU has it, computes len(out) (a multiple of
	// packGroup) rows from their packed copy (repack.go) against one
	// activation row; nil otherwise.
	dotPacked func(p []byte, nb int, x []byte, out []float32)
	// prepPacked, where set, turns an activation row (nb blocks) into what
	// dotPackedX reads in its place (q8PrepBytes a block), once per product
	// (quantizeActs): the work on the activations that dotPacked redoes
	// for every group of eight rows. dotPackedX equals dotPacked bit for bit.
	prepPacked func(x []byte, nb int, dst []byte)
	dotPackedX func(p []byte, nb int, xp []byte, out []float32)

	// Float types: the dot reads x as float32 directly.
	dotF func(w []byte, x []float32) float32
	// dotFM, where set, is dotF for up to rowsM activation rows at once,
	// equal to it bit for bit (dotrows.go).
	dotFM rowsFMFunc
	// dotFRows, where this CPU has it, is dotF for len(out) consecutive
	// weight rows, rb bytes apart, bit for bit; nil otherwise.
	dotFRows func(w []byte, rb int, x []float32, out []float32)
}

// quantize encodes one row of x in k's activation format through package
// ggml (byte-exact with ggml's from_float). Sizes were checked by Mul, so
// an error here is a bug.
func (k *kind) quantize(x []float32, dst []byte) {
	if k.actBytes == q8_0Bytes && len(x)%ggml.QK8_0 == 0 {
		quantQ8_0Row(x, dst) // the same bytes (quantq8.go)
		return
	}
	if err := ggml.QuantizeActivation(k.t, x, dst); err != nil {
		panic("cpu: " + err.Error())
	}
}

const (
	kindF32 = iota
	kindF16
	kindBF16
	kindQuant
)

var kinds = map[ggml.Type]*kind{
	ggml.F32:    {id: kindF32, t: ggml.F32, blockSize: 1, typeSize: 4, dotF: func(w []byte, x []float32) float32 { return dotF32(f32View(w, len(x)), x) }},
	ggml.F16:    {id: kindF16, t: ggml.F16, blockSize: 1, typeSize: 2, dotF: dotF16Generic},
	ggml.BF16:   {id: kindBF16, t: ggml.BF16, blockSize: 1, typeSize: 2, dotF: dotBF16Generic},
	ggml.Q4_0:   q(ggml.Q4_0, 32, 18, q8_0Bytes, dotQ4_0Generic),
	ggml.Q4_1:   q(ggml.Q4_1, 32, 20, q8_1Bytes, dotQ4_1Generic),
	ggml.Q5_0:   q(ggml.Q5_0, 32, 22, q8_0Bytes, dotQ5_0Generic),
	ggml.Q5_1:   q(ggml.Q5_1, 32, 24, q8_1Bytes, dotQ5_1Generic),
	ggml.Q8_0:   withRowsM(q(ggml.Q8_0, 32, 34, q8_0Bytes, dotQ8_0Generic), rowsMQ8_0Generic, prepScales, 1),
	ggml.Q2_K:   q(ggml.Q2_K, 256, 84, q8KBytes, dotQ2KGeneric),
	ggml.Q3_K:   q(ggml.Q3_K, 256, 110, q8KBytes, dotQ3KGeneric),
	ggml.Q4_K:   q(ggml.Q4_K, 256, 144, q8KBytes, dotQ4KGeneric),
	ggml.Q5_K:   q(ggml.Q5_K, 256, 176, q8KBytes, dotQ5KGeneric),
	ggml.Q6_K:   q(ggml.Q6_K, 256, 210, q8KBytes, dotQ6KGeneric),
	ggml.IQ4_NL: q(ggml.IQ4_NL, 32, 18, q8_0Bytes, dotIQ4NLGeneric),
}

func q(t ggml.Type, bs, ts, ab int, dot func(w, x []byte, nb int) float32) *kind {
	return &kind{id: kindQuant, t: t, blockSize: bs, typeSize: ts, actBytes: ab, dotQ: dot,
		dotQRows: func(w []byte, rb int, x []byte, nb int, out []float32) { rowsGeneric(dot, w, rb, x, nb, out) }}
}

// rowsGeneric runs a single-row dot over a run of rows.
func rowsGeneric(dot func(w, x []byte, nb int) float32, w []byte, rb int, x []byte, nb int, out []float32) {
	for r := range out {
		out[r] = dot(w[r*rb:], x, nb)
	}
}
