package ggml

import (
	"encoding/binary"
	"math"
)

// quantQ8_K is the activation format of the K-quants (and IQ4_XS and the
// other 256-element types): one float32 scale chosen so that the element of
// largest magnitude maps to ∓127, plus per-16 sums of the codes that let
// the dot products apply sub-block mins without touching every element.
func quantQ8_K(src []float32, dst []byte) {
	for ; len(src) >= QK_K; src, dst = src[QK_K:], dst[BlockQ8_KBytes:] {
		var amax, mx float32
		for _, v := range src[:QK_K] {
			if a := float32(math.Abs(float64(v))); a > amax {
				amax, mx = a, v
			}
		}
		if amax == 0 {
			clear(dst[:BlockQ8_KBytes])
			continue
		}
		iscale := -127 / mx
		qs := dst[4:260]
		for j := range QK_K {
			qs[j] = byte(int8(min(127, nearestInt(iscale*src[j]))))
		}
		for g := range QK_K / 16 {
			var sum int32
			for _, q := range qs[16*g : 16*g+16] {
				sum += int32(int8(q))
			}
			binary.LittleEndian.PutUint16(dst[260+2*g:], uint16(int16(sum)))
		}
		binary.LittleEndian.PutUint32(dst, math.Float32bits(1/iscale))
	}
}
