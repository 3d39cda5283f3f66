package ggml

import (
	"encoding/binary"
	"fmt"
	"math"
)

// rowFunc decodes whole blocks: len(dst) is a multiple of the block size and
// src holds exactly the matching bytes.
type rowFunc func(src []byte, dst []float32)

var dequantizers = map[Type]rowFunc{
	F32:    dequantF32,
	F16:    dequantF16,
	BF16:   dequantBF16,
	Q4_0:   dequantQ4_0,
	Q4_1:   dequantQ4_1,
	Q5_0:   dequantQ5_0,
	Q5_1:   dequantQ5_1,
	Q8_0:   dequantQ8_0,
	Q8_1:   dequantQ8_1,
	Q2_K:   dequantQ2_K,
	Q3_K:   dequantQ3_K,
	Q4_K:   dequantQ4_K,
	Q5_K:   dequantQ5_K,
	Q6_K:   dequantQ6_K,
	Q8_K:   dequantQ8_K,
	IQ4_NL: dequantIQ4NL,
}

// Dequantize decodes len(dst) elements of type t from src, which must hold
// exactly RowBytes(t, len(dst)) bytes (one row or several rows back to
// back). The results equal ggml's to_float bit for bit.
func Dequantize(t Type, src []byte, dst []float32) error {
	f, ok := dequantizers[t]
	if !ok {
		return unsupported("dequantize", t)
	}
	if err := checkLen(t, len(dst), len(src)); err != nil {
		return err
	}
	f(src, dst)
	return nil
}

// unsupported names the type (and its id when ggml does not know it).
func unsupported(op string, t Type) error {
	if !t.Known() {
		return fmt.Errorf("ggml: %s: unknown type id %d", op, uint32(t))
	}
	return fmt.Errorf("ggml: %s: type %s is not supported", op, t)
}

// checkLen verifies that nbytes is exactly the storage of n elements of t.
func checkLen(t Type, n, nbytes int) error {
	want, err := RowBytes(t, int64(n))
	if err != nil {
		return err
	}
	if int64(nbytes) != want {
		return fmt.Errorf("ggml: %d elements of %s take %d bytes, got %d", n, t, want, nbytes)
	}
	return nil
}

func dequantF32(src []byte, dst []float32) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func dequantF16(src []byte, dst []float32) {
	for i := range dst {
		dst[i] = FP16ToFP32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

func dequantBF16(src []byte, dst []float32) {
	for i := range dst {
		dst[i] = BF16ToFP32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}
