package cpu

import "github.com/harkapp/hark/engine/ggml"

// dequantRow expands one weight row of k elements to float32 for the tiles
// of matrix-matrix products, where the float GEMM reuses each element for
// many activation rows. Package ggml decodes bit-exactly; f32 is a copy.
func dequantRow(k *kind, w []byte, out []float32) {
	if k.id == kindF32 {
		copy(out, f32View(w, len(out)))
		return
	}
	if err := ggml.Dequantize(k.t, w[:len(out)/k.blockSize*k.typeSize], out); err != nil {
		panic("cpu: " + err.Error())
	}
}
