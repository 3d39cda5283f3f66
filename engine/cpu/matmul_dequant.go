package cpu

import "github.com/harkapp/hark/engine/ggml"

// dequantRow expands one weight row of k elements to float32 for the tiles
// of matrix-matrix products, where the float GEMM reuses each element for
// many activation rows. Package ggml decodes bit-exactly; f32 is a copy and
// f16 uses the CPU's conversion instruction where it has one (its tiles are
// the largest to expand, and ggml's portable conversion is several times
// slower).
func dequantRow(k *kind, w []byte, out []float32) {
	switch {
	case k.id == kindF32:
		copy(out, f32View(w, len(out)))
		return
	case k.id == kindF16 && dequantF16 != nil:
		dequantF16(w, out)
		return
	}
	if err := ggml.Dequantize(k.t, w[:len(out)/k.blockSize*k.typeSize], out); err != nil {
		panic("cpu: " + err.Error())
	}
}

// dequantF16 is the SIMD f16 row conversion, nil where there is none.
var dequantF16 func(w []byte, out []float32)
