package ggml

import (
	"encoding/binary"
	"math"
)

// Quantize encodes src as type t into dst, which must hold exactly
// RowBytes(t, len(src)) bytes. The bytes equal ggml's reference quantizers
// (quantize_row_*_ref, which is what ggml_quantize_chunk uses without an
// importance matrix). For IQ4_NL it follows ggml_quantize_chunk (see
// quantize_iq4nl.go). Blocks are independent, so src may span several rows.
func Quantize(t Type, src []float32, dst []byte) error {
	c, err := codecFor("quantize", t, len(src), len(dst))
	if err != nil {
		return err
	}
	c.encode(src, dst)
	return nil
}

// ActivationType is the format an activation row must be quantized to
// before VecDot with a weight row of type t (ggml's CPU vec_dot_type).
func ActivationType(t Type) (Type, error) {
	if _, ok := vecDots[t]; !ok {
		return 0, unsupported("vec_dot", t)
	}
	return traits[t].VecDotType, nil
}

// ActivationBytes is the size of n activation elements quantized for a
// weight of type t.
func ActivationBytes(t Type, n int) (int, error) {
	at, err := ActivationType(t)
	if err != nil {
		return 0, err
	}
	b, err := RowBytes(at, int64(n))
	return int(b), err
}

// QuantizeActivation encodes the activation x in the format VecDot pairs
// with weight type t, as ggml's CPU from_float does; dst must hold exactly
// ActivationBytes(t, len(x)) bytes.
func QuantizeActivation(t Type, x []float32, dst []byte) error {
	at, err := ActivationType(t)
	if err != nil {
		return err
	}
	return Quantize(at, x, dst)
}

func quantF32(src []float32, dst []byte) {
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

func quantF16(src []float32, dst []byte) {
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], FP32ToFP16(v))
	}
}

func quantBF16(src []float32, dst []byte) {
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], FP32ToBF16(v))
	}
}

// nearestInt rounds half to even the way ggml's nearest_int does: adding
// 1.5·2^23 leaves the rounded integer in the low mantissa bits. Valid for
// |f| < 2^22, which every caller guarantees.
func nearestInt(f float32) int32 {
	v := float32(f) + 12582912
	return int32(math.Float32bits(v)&0x7fffff) - 0x400000
}

// roundAway is C's roundf (half away from zero).
func roundAway(f float32) float32 { return float32(math.Round(float64(f))) }
