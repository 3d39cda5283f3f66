package ggml

import (
	"encoding/binary"
	"math"
)

// F32Bytes is v as F32 tensor data: little-endian float32s, in a new slice.
func F32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// BytesF32 reads F32 tensor data into a new slice (a trailing partial value
// is ignored).
func BytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
