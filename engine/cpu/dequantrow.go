package cpu

import (
	"encoding/binary"
	"math"

	"github.com/harkapp/hark/engine/ggml"
)

// canDequantRow reports whether dequantRow handles t.
func canDequantRow(t ggml.Type) bool {
	return t == ggml.F32 || t == ggml.F16 || t == ggml.BF16
}

// dequantRow expands one row of t into dst (len(dst) elements).
// TEMPORARY float-only version until engine/ggml.Dequantize is merged.
func dequantRow(t ggml.Type, src []byte, dst []float32) {
	switch t {
	case ggml.F32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case ggml.F16:
		for i := range dst {
			dst[i] = halfLUT[binary.LittleEndian.Uint16(src[2*i:])]
		}
	case ggml.BF16:
		for i := range dst {
			dst[i] = ggml.BF16ToFP32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	}
}
