package ggml

import (
	"encoding/binary"
	"math"
)

// Block geometry of the K-quants: super-blocks of QK_K = 256 elements split
// into sub-blocks of 16 or 32. Multi-byte fields are little-endian.
const (
	BlockQ2_KBytes = 84
	BlockQ3_KBytes = 110
	BlockQ4_KBytes = 144
	BlockQ5_KBytes = 176
	BlockQ6_KBytes = 210
	BlockQ8_KBytes = 292

	// KScaleSize is the packed 6-bit scale/min area of Q4_K and Q5_K.
	KScaleSize = 12
)

// Layouts (byte offsets within one super-block; e is the element index
// 0..255 within it):
//
// Q2_K (84 B): [0:16] scales: byte s describes sub-block s (16 elements,
// s = e/16): low nibble = scale, high nibble = min. [16:80] qs: 2-bit codes,
// e = 128h + 32j + l (h 0..1, j 0..3, l 0..31) is bits 2j..2j+1 of
// qs[32h + l]. [80:82] d half, [82:84] dmin half.
// y = d*(scale) * code - dmin*(min).
//
// Q3_K (110 B): [0:32] hmask, [32:96] qs, [96:108] scales, [108:110] d half.
// Low two code bits as Q2_K; the third bit of e = 128h + 32j + l is bit
// (4h + j) of hmask[l]; code = low2 - (bit set ? 0 : 4), in -4..3.
// 16 6-bit scales (sub-blocks of 16, s = e/16) are packed into the 12 bytes
// sc: low nibble = s < 8 ? sc[s]&15 : sc[s-8]>>4; high two bits =
// (sc[8 + s%4] >> (2*(s/4))) & 3. y = d*(scale6 - 32) * code.
//
// Q4_K (144 B): [0:2] d half, [2:4] dmin half, [4:16] scales (8 6-bit scales
// and 8 6-bit mins, one per 32-element sub-block s = e/32, unpacked by
// ScaleMinK4), [16:144] qs: e = 64c + l (c 0..3, l 0..63) is the low nibble
// of qs[32c + l] for l < 32 and the high nibble of qs[32c + l-32] otherwise.
// y = d*scale * code - dmin*min.
//
// Q5_K (176 B): [0:2] d, [2:4] dmin, [4:16] scales as Q4_K, [16:48] qh,
// [48:176] qs as Q4_K's low nibbles; the fifth bit (16) of element e is bit
// e/32 of qh[e%32]. y = d*scale * code - dmin*min.
//
// Q6_K (210 B): [0:128] ql, [128:192] qh, [192:208] 16 int8 scales (one per
// 16 elements, s = e/16), [208:210] d half. For e = 128h + 32k + l (k 0..3,
// l 0..31): low nibble is ql[64h + l + 32(k&1)] (low nibble for k < 2, high
// for k >= 2), high two bits are (qh[32h + l] >> 2k) & 3;
// y = d*scale * (code - 32).
//
// Q8_K (292 B, activations only): [0:4] d float32, [4:260] 256 int8 qs,
// [260:292] 16 int16 bsums (sum of each 16 consecutive qs). y = d * qs.

// ScaleMinK4 unpacks the 6-bit scale and min of sub-block j (0..7) from the
// 12-byte scales area of a Q4_K or Q5_K block: j < 4 uses the low six bits
// of bytes j and j+4; j >= 4 takes its low four bits from byte j+4's nibbles
// and its top two bits from the spare top bits of bytes j-4 and j.
func ScaleMinK4(j int, q []byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xf | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// Q3KScales unpacks the 16 signed scales (already minus 32) of a Q3_K block.
func Q3KScales(sc []byte) (out [16]int8) {
	for s := range 16 {
		var lo byte
		if s < 8 {
			lo = sc[s] & 0xf
		} else {
			lo = sc[s-8] >> 4
		}
		hi := (sc[8+s%4] >> (2 * (s / 4))) & 3
		out[s] = int8(lo|hi<<4) - 32
	}
	return out
}

func dequantQ2_K(src []byte, dst []float32) {
	for ; len(dst) >= QK_K; src, dst = src[BlockQ2_KBytes:], dst[QK_K:] {
		sc, qs := src[0:16], src[16:80]
		d, dmin := half(src[80:]), half(src[82:])
		for e := range QK_K {
			h, j, l := e/128, (e%128)/32, e%32
			code := (qs[32*h+l] >> (2 * j)) & 3
			s := sc[e/16]
			dl, ml := d*float32(s&0xf), dmin*float32(s>>4)
			dst[e] = float32(dl*float32(code)) - ml
		}
	}
}

func dequantQ3_K(src []byte, dst []float32) {
	for ; len(dst) >= QK_K; src, dst = src[BlockQ3_KBytes:], dst[QK_K:] {
		hm, qs := src[0:32], src[32:96]
		scales := Q3KScales(src[96:108])
		d := half(src[108:])
		for e := range QK_K {
			h, j, l := e/128, (e%128)/32, e%32
			code := int32((qs[32*h+l] >> (2 * j)) & 3)
			if hm[l]&(1<<(4*h+j)) == 0 {
				code -= 4
			}
			dl := d * float32(scales[e/16])
			dst[e] = dl * float32(code)
		}
	}
}

func dequantQ4_K(src []byte, dst []float32) {
	for ; len(dst) >= QK_K; src, dst = src[BlockQ4_KBytes:], dst[QK_K:] {
		d, dmin := half(src), half(src[2:])
		scales, qs := src[4:16], src[16:144]
		for s := range 8 {
			sc, m := ScaleMinK4(s, scales)
			d1, m1 := d*float32(sc), dmin*float32(m)
			q := qs[32*(s/2) : 32*(s/2)+32]
			shift := 4 * uint(s&1)
			y := dst[32*s : 32*s+32]
			for l := range 32 {
				y[l] = float32(d1*float32((q[l]>>shift)&0xf)) - m1
			}
		}
	}
}

func dequantQ5_K(src []byte, dst []float32) {
	for ; len(dst) >= QK_K; src, dst = src[BlockQ5_KBytes:], dst[QK_K:] {
		d, dmin := half(src), half(src[2:])
		scales, qh, qs := src[4:16], src[16:48], src[48:176]
		for s := range 8 {
			sc, m := ScaleMinK4(s, scales)
			d1, m1 := d*float32(sc), dmin*float32(m)
			q := qs[32*(s/2) : 32*(s/2)+32]
			shift := 4 * uint(s&1)
			y := dst[32*s : 32*s+32]
			for l := range 32 {
				code := (q[l] >> shift) & 0xf
				if qh[l]&(1<<s) != 0 {
					code += 16
				}
				y[l] = float32(d1*float32(code)) - m1
			}
		}
	}
}

func dequantQ6_K(src []byte, dst []float32) {
	for ; len(dst) >= QK_K; src, dst = src[BlockQ6_KBytes:], dst[QK_K:] {
		ql, qh, sc := src[0:128], src[128:192], src[192:208]
		d := half(src[208:])
		for e := range QK_K {
			h, k, l := e/128, (e%128)/32, e%32
			lo := ql[64*h+l+32*(k&1)]
			if k >= 2 {
				lo >>= 4
			}
			code := int32(lo&0xf) | int32((qh[32*h+l]>>(2*k))&3)<<4
			dst[e] = float32(d*float32(int8(sc[e/16]))) * float32(code-32)
		}
	}
}

func dequantQ8_K(src []byte, dst []float32) {
	for ; len(dst) >= QK_K; src, dst = src[BlockQ8_KBytes:], dst[QK_K:] {
		d := math.Float32frombits(binary.LittleEndian.Uint32(src))
		for j := range QK_K {
			dst[j] = d * float32(int8(src[4+j]))
		}
	}
}
