package cpu

import "github.com/harkapp/hark/engine/ggml"

// canDequantRow reports whether embedRow handles t: an empty decode
// succeeds exactly for the types ggml.Dequantize supports.
func canDequantRow(t ggml.Type) bool {
	return t != ggml.I32 && ggml.Dequantize(t, nil, nil) == nil
}

// embedRow expands one row of t into dst. The type was checked at load
// and the row length at dispatch, so an error here is a bug.
func embedRow(t ggml.Type, src []byte, dst []float32) {
	if err := ggml.Dequantize(t, src, dst); err != nil {
		panic("cpu: " + err.Error())
	}
}
