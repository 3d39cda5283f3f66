package ggml

import (
	"encoding/binary"
	"fmt"
	"math"
)

// rowFunc decodes whole blocks: len(dst) is a multiple of the block size and
// src holds exactly the matching bytes.
type rowFunc func(src []byte, dst []float32)

// quantFunc encodes whole blocks: len(src) is a multiple of the block size
// and dst holds exactly the matching bytes.
type quantFunc func(src []float32, dst []byte)

// codec is a type's block decoder and encoder.
type codec struct {
	decode rowFunc
	encode quantFunc
}

// codecs holds the types Dequantize and Quantize support (the same ones).
var codecs = map[Type]codec{
	F32:    {dequantF32, quantF32},
	F16:    {dequantF16, quantF16},
	BF16:   {dequantBF16, quantBF16},
	Q4_0:   {dequantQ4_0, quantQ4_0},
	Q4_1:   {dequantQ4_1, quantQ4_1},
	Q5_0:   {dequantQ5_0, quantQ5_0},
	Q5_1:   {dequantQ5_1, quantQ5_1},
	Q8_0:   {dequantQ8_0, quantQ8_0},
	Q8_1:   {dequantQ8_1, quantQ8_1},
	Q2_K:   {dequantQ2_K, quantQ2_K},
	Q3_K:   {dequantQ3_K, quantQ3_K},
	Q4_K:   {dequantQ4_K, quantQ4_K},
	Q5_K:   {dequantQ5_K, quantQ5_K},
	Q6_K:   {dequantQ6_K, quantQ6_K},
	Q8_K:   {dequantQ8_K, quantQ8_K},
	IQ4_NL: {dequantIQ4NL, quantIQ4NL},
}

// codecFor returns t's codec once n elements and their size in bytes
// agree; op names the operation in errors.
func codecFor(op string, t Type, n, size int) (codec, error) {
	c, ok := codecs[t]
	if !ok {
		return codec{}, unsupported(op, t)
	}
	return c, checkLen(t, n, size)
}

// Dequantize decodes len(dst) elements of type t from src, which must hold
// exactly RowBytes(t, len(dst)) bytes (one row or several rows back to
// back). The results equal ggml's to_float bit for bit.
func Dequantize(t Type, src []byte, dst []float32) error {
	c, err := codecFor("dequantize", t, len(dst), len(src))
	if err != nil {
		return err
	}
	c.decode(src, dst)
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
