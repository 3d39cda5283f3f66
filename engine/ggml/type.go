// Package ggml describes ggml's tensor element types: their ids as stored in
// GGUF and whisper.cpp files, block geometry, and (in sibling files) the block
// formats, dequantization, quantization and ggml's dot-product formulas.
package ggml

import (
	"fmt"
	"strings"
)

// Type is a ggml tensor type id, exactly as stored in GGUF and GGML files.
type Type uint32

// ggml type ids (ggml.h enum ggml_type). Gaps are ids ggml has retired.
const (
	F32     Type = 0
	F16     Type = 1
	Q4_0    Type = 2
	Q4_1    Type = 3
	Q5_0    Type = 6
	Q5_1    Type = 7
	Q8_0    Type = 8
	Q8_1    Type = 9
	Q2_K    Type = 10
	Q3_K    Type = 11
	Q4_K    Type = 12
	Q5_K    Type = 13
	Q6_K    Type = 14
	Q8_K    Type = 15
	IQ2_XXS Type = 16
	IQ2_XS  Type = 17
	IQ3_XXS Type = 18
	IQ1_S   Type = 19
	IQ4_NL  Type = 20
	IQ3_S   Type = 21
	IQ2_S   Type = 22
	IQ4_XS  Type = 23
	I8      Type = 24
	I16     Type = 25
	I32     Type = 26
	I64     Type = 27
	F64     Type = 28
	IQ1_M   Type = 29
	BF16    Type = 30
	TQ1_0   Type = 34
	TQ2_0   Type = 35
	MXFP4   Type = 39
	NVFP4   Type = 40
	Q1_0    Type = 41
	Q2_0    Type = 42
)

// QK_K is the super-block size of the K-quants.
const QK_K = 256

// Traits is the storage geometry of a type.
type Traits struct {
	Name      string // ggml's lower-case name
	BlockSize int    // elements per block
	TypeSize  int    // bytes per block
	Quantized bool
	// Supported means Hark can compute with tensors of this type.
	Supported bool
	// VecDotType is the activation format ggml's CPU dot product pairs with
	// this weight type (Q8_0, Q8_1, Q8_K, or the type itself for floats).
	VecDotType Type
}

// The table mirrors ggml_get_type_traits() (checked against
// llm-kit/ggml-quants/ggml_types.json in tests).
var traits = map[Type]Traits{
	F32:     {"f32", 1, 4, false, true, F32},
	F16:     {"f16", 1, 2, false, true, F16},
	Q4_0:    {"q4_0", 32, 18, true, true, Q8_0},
	Q4_1:    {"q4_1", 32, 20, true, true, Q8_1},
	Q5_0:    {"q5_0", 32, 22, true, true, Q8_0},
	Q5_1:    {"q5_1", 32, 24, true, true, Q8_1},
	Q8_0:    {"q8_0", 32, 34, true, true, Q8_0},
	Q8_1:    {"q8_1", 32, 36, true, true, Q8_1},
	Q2_K:    {"q2_K", 256, 84, true, true, Q8_K},
	Q3_K:    {"q3_K", 256, 110, true, true, Q8_K},
	Q4_K:    {"q4_K", 256, 144, true, true, Q8_K},
	Q5_K:    {"q5_K", 256, 176, true, true, Q8_K},
	Q6_K:    {"q6_K", 256, 210, true, true, Q8_K},
	Q8_K:    {"q8_K", 256, 292, true, true, Q8_K},
	IQ2_XXS: {"iq2_xxs", 256, 66, true, false, Q8_K},
	IQ2_XS:  {"iq2_xs", 256, 74, true, false, Q8_K},
	IQ3_XXS: {"iq3_xxs", 256, 98, true, false, Q8_K},
	IQ1_S:   {"iq1_s", 256, 50, true, false, Q8_K},
	IQ4_NL:  {"iq4_nl", 32, 18, true, true, Q8_0},
	IQ3_S:   {"iq3_s", 256, 110, true, false, Q8_K},
	IQ2_S:   {"iq2_s", 256, 82, true, false, Q8_K},
	IQ4_XS:  {"iq4_xs", 256, 136, true, false, Q8_K},
	I8:      {"i8", 1, 1, false, false, I8},
	I16:     {"i16", 1, 2, false, false, I16},
	I32:     {"i32", 1, 4, false, true, I32},
	I64:     {"i64", 1, 8, false, false, I64},
	F64:     {"f64", 1, 8, false, false, F64},
	IQ1_M:   {"iq1_m", 256, 56, true, false, Q8_K},
	BF16:    {"bf16", 1, 2, false, true, BF16},
	TQ1_0:   {"tq1_0", 256, 54, true, false, Q8_K},
	TQ2_0:   {"tq2_0", 256, 66, true, false, Q8_K},
	MXFP4:   {"mxfp4", 32, 17, true, false, Q8_0},
	NVFP4:   {"nvfp4", 64, 36, true, false, Q8_0},
	Q1_0:    {"q1_0", 128, 18, true, false, Q8_0},
	Q2_0:    {"q2_0", 64, 18, true, false, Q8_0},
}

// Known reports whether t is a type id ggml defines.
func (t Type) Known() bool { _, ok := traits[t]; return ok }

// Traits returns t's geometry; ok is false for ids ggml does not define.
func (t Type) Traits() (Traits, bool) { tr, ok := traits[t]; return tr, ok }

// String is ggml's lower-case type name, or "type(N)" for unknown ids.
func (t Type) String() string {
	if tr, ok := traits[t]; ok {
		return tr.Name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// BlockSize is the number of elements per block (1 for plain types).
func (t Type) BlockSize() int { return traits[t].BlockSize }

// TypeSize is the number of bytes per block.
func (t Type) TypeSize() int { return traits[t].TypeSize }

// Supported reports whether Hark computes with tensors of this type.
func (t Type) Supported() bool { return traits[t].Supported }

// ParseType maps a ggml type name (case-insensitive) to its id.
func ParseType(name string) (Type, error) {
	for t, tr := range traits {
		if strings.EqualFold(tr.Name, name) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("ggml: unknown type name %q", name)
}

// RowBytes is the storage size of n elements of type t. It fails when t is
// unknown or n is not a whole number of blocks.
func RowBytes(t Type, n int64) (int64, error) {
	tr, ok := traits[t]
	if !ok {
		return 0, fmt.Errorf("ggml: unknown type id %d", uint32(t))
	}
	if n < 0 || n%int64(tr.BlockSize) != 0 {
		return 0, fmt.Errorf("ggml: %d elements is not a multiple of %s's block size %d", n, tr.Name, tr.BlockSize)
	}
	return n / int64(tr.BlockSize) * int64(tr.TypeSize), nil
}

// TensorBytes is the storage size of a tensor with ggml-order shape ne
// (ne[0] is the contiguous dimension). It guards against overflow so that
// hostile files cannot make callers allocate absurd sizes.
func TensorBytes(t Type, ne []int64) (int64, error) {
	if len(ne) == 0 {
		return RowBytes(t, 1)
	}
	row, err := RowBytes(t, ne[0])
	if err != nil {
		return 0, err
	}
	total := row
	const limit = int64(1) << 50 // 1 PiB: beyond any real model
	for _, d := range ne[1:] {
		if d < 0 {
			return 0, fmt.Errorf("ggml: negative dimension %d", d)
		}
		if d != 0 && total > limit/d {
			return 0, fmt.Errorf("ggml: tensor size overflows (shape %v)", ne)
		}
		total *= d
	}
	if total > limit {
		return 0, fmt.Errorf("ggml: tensor size overflows (shape %v)", ne)
	}
	return total, nil
}

// UnsupportedError is returned when a tensor's type is known to ggml but
// Hark has no kernels for it.
type UnsupportedError struct {
	Tensor string
	Type   Type
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("tensor %q has type %s, which Hark does not support", e.Tensor, e.Type)
}
