package ggml

import (
	"encoding/binary"
	"math"
)

// absMaxSigned returns the element of largest magnitude (first one on ties),
// with its sign, as the symmetric legacy quantizers pick their scale.
func absMaxSigned(x []float32) float32 {
	var amax, max float32
	for _, v := range x {
		if a := float32(math.Abs(float64(v))); amax < a {
			amax, max = a, v
		}
	}
	return max
}

func minMax(x []float32) (lo, hi float32) {
	lo, hi = math.MaxFloat32, -math.MaxFloat32
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

func inv(d float32) float32 {
	if d != 0 {
		return 1 / d
	}
	return 0
}

func quantQ4_0(src []float32, dst []byte) {
	for ; len(src) >= QK4_0; src, dst = src[QK4_0:], dst[BlockQ4_0Bytes:] {
		d := absMaxSigned(src[:QK4_0]) / -8
		id := inv(d)
		putHalf(dst, d)
		for j := range 16 {
			a := min(15, int32(float32(src[j]*id)+8.5))
			b := min(15, int32(float32(src[j+16]*id)+8.5))
			dst[2+j] = byte(a) | byte(b)<<4
		}
	}
}

func quantQ4_1(src []float32, dst []byte) {
	for ; len(src) >= QK4_1; src, dst = src[QK4_1:], dst[BlockQ4_1Bytes:] {
		lo, hi := minMax(src[:QK4_1])
		d := (hi - lo) / 15
		id := inv(d)
		putHalf(dst, d)
		putHalf(dst[2:], lo)
		for j := range 16 {
			a := min(15, int32(float32((src[j]-lo)*id)+0.5))
			b := min(15, int32(float32((src[j+16]-lo)*id)+0.5))
			dst[4+j] = byte(a) | byte(b)<<4
		}
	}
}

func quantQ5_0(src []float32, dst []byte) {
	for ; len(src) >= QK5_0; src, dst = src[QK5_0:], dst[BlockQ5_0Bytes:] {
		d := absMaxSigned(src[:QK5_0]) / -16
		id := inv(d)
		putHalf(dst, d)
		var qh uint32
		for j := range 16 {
			a := uint32(min(31, int32(float32(src[j]*id)+16.5)))
			b := uint32(min(31, int32(float32(src[j+16]*id)+16.5)))
			dst[6+j] = byte(a&0xf) | byte(b&0xf)<<4
			qh |= (a >> 4) << j
			qh |= (b >> 4) << (j + 16)
		}
		binary.LittleEndian.PutUint32(dst[2:], qh)
	}
}

func quantQ5_1(src []float32, dst []byte) {
	for ; len(src) >= QK5_1; src, dst = src[QK5_1:], dst[BlockQ5_1Bytes:] {
		lo, hi := minMax(src[:QK5_1])
		d := (hi - lo) / 31
		id := inv(d)
		putHalf(dst, d)
		putHalf(dst[2:], lo)
		var qh uint32
		for j := range 16 {
			// ggml does not clamp here; (x-min)/d <= 31 by construction.
			a := uint32(uint8(int32(float32((src[j]-lo)*id) + 0.5)))
			b := uint32(uint8(int32(float32((src[j+16]-lo)*id) + 0.5)))
			dst[8+j] = byte(a&0xf) | byte(b&0xf)<<4
			qh |= ((a & 0x10) >> 4) << j
			qh |= ((b & 0x10) >> 4) << (j + 16)
		}
		binary.LittleEndian.PutUint32(dst[4:], qh)
	}
}

func absMax(x []float32) float32 {
	var amax float32
	for _, v := range x {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	return amax
}

// quantQ8_0 is both the weight quantizer and the CPU activation format for
// q4_0/q5_0/q8_0/iq4_nl.
func quantQ8_0(src []float32, dst []byte) {
	for ; len(src) >= QK8_0; src, dst = src[QK8_0:], dst[BlockQ8_0Bytes:] {
		d := absMax(src[:QK8_0]) / 127
		id := inv(d)
		putHalf(dst, d)
		for j := range QK8_0 {
			dst[2+j] = byte(int8(roundAway(src[j] * id)))
		}
	}
}

// quantQ8_1 is the activation format for q4_1/q5_1: Q8_0 plus s = d·Σq.
func quantQ8_1(src []float32, dst []byte) {
	for ; len(src) >= QK8_1; src, dst = src[QK8_1:], dst[BlockQ8_1Bytes:] {
		d := absMax(src[:QK8_1]) / 127
		id := inv(d)
		putHalf(dst, d)
		var sum int32
		for j := range QK8_1 {
			q := int8(roundAway(src[j] * id))
			dst[4+j] = byte(q)
			sum += int32(q)
		}
		putHalf(dst[2:], float32(sum)*d)
	}
}
