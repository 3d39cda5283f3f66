package ggml

import (
	"encoding/binary"
	"fmt"
	"math"
)

// dotFunc computes the dot product of whole blocks: w and act hold exactly
// the bytes of n elements in the weight and activation formats.
type dotFunc func(n int, w, act []byte) float32

var vecDots = map[Type]dotFunc{
	F32:    dotF32,
	F16:    dotF16,
	BF16:   dotBF16,
	Q4_0:   dotQ4_0,
	Q4_1:   dotQ4_1,
	Q5_0:   dotQ5_0,
	Q5_1:   dotQ5_1,
	Q8_0:   dotQ8_0,
	Q2_K:   dotQ2_K,
	Q3_K:   dotQ3_K,
	Q4_K:   dotQ4_K,
	Q5_K:   dotQ5_K,
	Q6_K:   dotQ6_K,
	IQ4_NL: dotIQ4NL,
}

// VecDot is the dot product of n elements of a weight row w of type t with
// an activation act already quantized to t's activation format (see
// ActivationType and QuantizeActivation). It follows ggml's generic CPU
// formulas, including where they differ from the exact sum: q4_1 and q5_1
// take the min term from Q8_1's stored half s, so their result differs from
// the dot of the dequantized rows by about 1% of that term.
func VecDot(t Type, n int, w, act []byte) (float32, error) {
	f, ok := vecDots[t]
	if !ok {
		return 0, unsupported("vec_dot", t)
	}
	if n < 0 {
		return 0, fmt.Errorf("ggml: vec_dot: negative length %d", n)
	}
	if err := checkLen(t, n, len(w)); err != nil {
		return 0, err
	}
	if err := checkLen(traits[t].VecDotType, n, len(act)); err != nil {
		return 0, fmt.Errorf("activation: %w", err)
	}
	return f(n, w, act), nil
}

// The float dot products accumulate in float64, as ggml's scalar path does.

func dotF32(n int, w, act []byte) float32 {
	return dotFloats(n, w, act, 4, func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) })
}

func dotF16(n int, w, act []byte) float32 {
	return dotFloats(n, w, act, 2, half)
}

func dotBF16(n int, w, act []byte) float32 {
	return dotFloats(n, w, act, 2, func(b []byte) float32 { return BF16ToFP32(binary.LittleEndian.Uint16(b)) })
}

// dotFloats is the dot product of n floats of size bytes each, read by at;
// each product is rounded to float32 before the float64 sum, as in ggml.
func dotFloats(n int, w, act []byte, size int, at func([]byte) float32) float32 {
	var sum float64
	for i := range n {
		sum += float64(at(w[size*i:]) * at(act[size*i:]))
	}
	return float32(sum)
}
