package ggml

import "encoding/binary"

// Block geometry of the 32-element ("legacy") formats. All multi-byte fields
// are little-endian; "half" is an IEEE binary16 (see FP16ToFP32).
const (
	QK4_0  = 32 // elements per Q4_0 block
	QK4_1  = 32
	QK5_0  = 32
	QK5_1  = 32
	QK8_0  = 32
	QK8_1  = 32
	QK4_NL = 32

	BlockQ4_0Bytes  = 18 // half d | 16 B qs
	BlockQ4_1Bytes  = 20 // half d | half m | 16 B qs
	BlockQ5_0Bytes  = 22 // half d | 4 B qh | 16 B qs
	BlockQ5_1Bytes  = 24 // half d | half m | 4 B qh | 16 B qs
	BlockQ8_0Bytes  = 34 // half d | 32 B qs (int8)
	BlockQ8_1Bytes  = 36 // half d | half s | 32 B qs (int8)
	BlockIQ4NLBytes = 18 // half d | 16 B qs
)

// Layouts (byte offsets within one block; element i of the block is y[i]):
//
// Q4_0 (18 B): [0:2] d half; [2:18] qs. For j in 0..15, qs[j] holds two
// 4-bit codes: low nibble is element j, high nibble is element j+16.
// y = (code - 8) * d.
//
// Q4_1 (20 B): [0:2] d half; [2:4] m half; [4:20] qs, nibbles as Q4_0.
// y = code*d + m.
//
// Q5_0 (22 B): [0:2] d half; [2:6] qh (uint32 LE); [6:22] qs, nibbles as
// Q4_0. Bit j of qh is the fifth (0x10) bit of element j (j in 0..31), so
// element j's code is nibble | ((qh>>j)&1)<<4. y = (code - 16) * d.
//
// Q5_1 (24 B): [0:2] d half; [2:4] m half; [4:8] qh; [8:24] qs, codes as
// Q5_0. y = code*d + m.
//
// Q8_0 (34 B): [0:2] d half; [2:34] 32 int8 qs. y = qs[i] * d.
//
// Q8_1 (36 B): [0:2] d half; [2:4] s half; [4:36] 32 int8 qs. y = qs[i]*d;
// s = d * Σqs, rounded to half, is used by the q4_1/q5_1 dot products
// for their min term.
//
// IQ4_NL (18 B): [0:2] d half; [2:18] qs, nibbles as Q4_0 but each code
// indexes the non-linear table KValuesIQ4NL: y = d * KValuesIQ4NL[code].

// KValuesIQ4NL is IQ4_NL's (and IQ4_XS's) non-linear 4-bit code book.
var KValuesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

func half(b []byte) float32 { return FP16ToFP32(binary.LittleEndian.Uint16(b)) }

func putHalf(b []byte, f float32) { binary.LittleEndian.PutUint16(b, FP32ToFP16(f)) }

// The float32(...) conversions around products below stop the Go compiler
// from fusing a*b+c into an FMA (it does on arm64), which would change the
// last bit relative to ggml's separately rounded C arithmetic.

func dequantQ4_0(src []byte, dst []float32) {
	for ; len(dst) >= QK4_0; src, dst = src[BlockQ4_0Bytes:], dst[QK4_0:] {
		d := half(src)
		qs := src[2:18]
		for j := range 16 {
			dst[j] = float32(int32(qs[j]&0xf)-8) * d
			dst[j+16] = float32(int32(qs[j]>>4)-8) * d
		}
	}
}

func dequantQ4_1(src []byte, dst []float32) {
	for ; len(dst) >= QK4_1; src, dst = src[BlockQ4_1Bytes:], dst[QK4_1:] {
		d, m := half(src), half(src[2:])
		qs := src[4:20]
		for j := range 16 {
			dst[j] = float32(float32(qs[j]&0xf)*d) + m
			dst[j+16] = float32(float32(qs[j]>>4)*d) + m
		}
	}
}

// q5Codes expands the 5-bit codes of a Q5_0/Q5_1 block.
func q5Codes(qh uint32, qs []byte, codes *[32]int32) {
	for j := range 16 {
		codes[j] = int32(qs[j]&0xf) | int32((qh>>j)&1)<<4
		codes[j+16] = int32(qs[j]>>4) | int32((qh>>(j+16))&1)<<4
	}
}

func dequantQ5_0(src []byte, dst []float32) {
	var c [32]int32
	for ; len(dst) >= QK5_0; src, dst = src[BlockQ5_0Bytes:], dst[QK5_0:] {
		d := half(src)
		q5Codes(binary.LittleEndian.Uint32(src[2:]), src[6:22], &c)
		for j := range 32 {
			dst[j] = float32(c[j]-16) * d
		}
	}
}

func dequantQ5_1(src []byte, dst []float32) {
	var c [32]int32
	for ; len(dst) >= QK5_1; src, dst = src[BlockQ5_1Bytes:], dst[QK5_1:] {
		d, m := half(src), half(src[2:])
		q5Codes(binary.LittleEndian.Uint32(src[4:]), src[8:24], &c)
		for j := range 32 {
			dst[j] = float32(float32(c[j])*d) + m
		}
	}
}

func dequantQ8_0(src []byte, dst []float32) { dequantQ8(src, dst, BlockQ8_0Bytes, 2) }

// Q8_1 stores the block's scaled sum after the scale; decoding skips it.
func dequantQ8_1(src []byte, dst []float32) { dequantQ8(src, dst, BlockQ8_1Bytes, 4) }

// dequantQ8 decodes blocks of a half scale at offset 0 and 32 int8 codes
// at offset codes.
func dequantQ8(src []byte, dst []float32, blockBytes, codes int) {
	for ; len(dst) >= 32; src, dst = src[blockBytes:], dst[32:] {
		d := half(src)
		for j, q := range src[codes : codes+32] {
			dst[j] = float32(int8(q)) * d
		}
	}
}

func dequantIQ4NL(src []byte, dst []float32) {
	for ; len(dst) >= QK4_NL; src, dst = src[BlockIQ4NLBytes:], dst[QK4_NL:] {
		d := half(src)
		qs := src[2:18]
		for j := range 16 {
			dst[j] = d * float32(KValuesIQ4NL[qs[j]&0xf])
			dst[j+16] = d * float32(KValuesIQ4NL[qs[j]>>4])
		}
	}
}
