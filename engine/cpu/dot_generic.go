package cpu

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// Portable block dot products, one per weight type, following ggml's
// vec_dot formulas: integer sums inside a block, scaled by the weight and
// activation block scales. They are the reference the SIMD kernels are
// tested against and the path used on architectures without them.

// f32View reinterprets little-endian float32 storage.
func f32View(b []byte, n int) []float32 {
	if n == 0 {
		return nil
	}
	_ = b[4*n-1]
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n)
}

func dotF32Generic(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	n := len(a)
	b = b[:n]
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func dotF16Generic(w []byte, x []float32) float32 {
	var s0, s1 float32
	n := len(x)
	w = w[:2*n]
	i := 0
	for ; i+2 <= n; i += 2 {
		s0 += f16Table[binary.LittleEndian.Uint16(w[2*i:])] * x[i]
		s1 += f16Table[binary.LittleEndian.Uint16(w[2*i+2:])] * x[i+1]
	}
	for ; i < n; i++ {
		s0 += f16Table[binary.LittleEndian.Uint16(w[2*i:])] * x[i]
	}
	return s0 + s1
}

func dotBF16Generic(w []byte, x []float32) float32 {
	var s0, s1 float32
	n := len(x)
	w = w[:2*n]
	i := 0
	for ; i+2 <= n; i += 2 {
		s0 += math.Float32frombits(uint32(binary.LittleEndian.Uint16(w[2*i:]))<<16) * x[i]
		s1 += math.Float32frombits(uint32(binary.LittleEndian.Uint16(w[2*i+2:]))<<16) * x[i+1]
	}
	for ; i < n; i++ {
		s0 += math.Float32frombits(uint32(binary.LittleEndian.Uint16(w[2*i:]))<<16) * x[i]
	}
	return s0 + s1
}

// Block sizes in bytes.
const (
	q8_0Bytes = 34  // f16 d, 32×int8
	q8_1Bytes = 36  // f16 d, f16 s, 32×int8
	q8KBytes  = 292 // f32 d, 256×int8, 16×int16 bsums
)

func dotQ8_0Generic(w, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		wb := w[b*34 : b*34+34]
		xb := x[b*34 : b*34+34]
		var s int32
		for j := 2; j < 34; j++ {
			s += int32(int8(wb[j])) * int32(int8(xb[j]))
		}
		sum += float32(s) * (f16At(wb) * f16At(xb))
	}
	return sum
}

func dotQ4_0Generic(w, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		wb := w[b*18 : b*18+18]
		xb := x[b*34 : b*34+34]
		var s int32
		for j := 0; j < 16; j++ {
			q := wb[2+j]
			s += (int32(q&15)-8)*int32(int8(xb[2+j])) + (int32(q>>4)-8)*int32(int8(xb[18+j]))
		}
		sum += float32(s) * (f16At(wb) * f16At(xb))
	}
	return sum
}

func dotQ4_1Generic(w, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		wb := w[b*20 : b*20+20]
		xb := x[b*36 : b*36+36]
		var s int32
		for j := 0; j < 16; j++ {
			q := wb[4+j]
			s += int32(q&15)*int32(int8(xb[4+j])) + int32(q>>4)*int32(int8(xb[20+j]))
		}
		sum += float32(s)*(f16At(wb)*f16At(xb)) + f16At(wb[2:])*f16At(xb[2:])
	}
	return sum
}

func dotQ5_0Generic(w, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		wb := w[b*22 : b*22+22]
		xb := x[b*34 : b*34+34]
		qh := binary.LittleEndian.Uint32(wb[2:])
		var s int32
		for j := 0; j < 16; j++ {
			q := wb[6+j]
			h0 := int32((qh>>j)<<4) & 0x10
			h1 := int32(qh>>(j+12)) & 0x10
			s += (int32(q&15)|h0-16)*int32(int8(xb[2+j])) + (int32(q>>4)|h1-16)*int32(int8(xb[18+j]))
		}
		sum += float32(s) * (f16At(wb) * f16At(xb))
	}
	return sum
}

func dotQ5_1Generic(w, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		wb := w[b*24 : b*24+24]
		xb := x[b*36 : b*36+36]
		qh := binary.LittleEndian.Uint32(wb[4:])
		var s int32
		for j := 0; j < 16; j++ {
			q := wb[8+j]
			h0 := int32((qh>>j)<<4) & 0x10
			h1 := int32(qh>>(j+12)) & 0x10
			s += (int32(q&15)|h0)*int32(int8(xb[4+j])) + (int32(q>>4)|h1)*int32(int8(xb[20+j]))
		}
		sum += float32(s)*(f16At(wb)*f16At(xb)) + f16At(wb[2:])*f16At(xb[2:])
	}
	return sum
}

// iq4nlValues is ggml's non-linear 4-bit codebook (kvalues_iq4nl).
var iq4nlValues = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

func dotIQ4NLGeneric(w, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		wb := w[b*18 : b*18+18]
		xb := x[b*34 : b*34+34]
		var s int32
		for j := 0; j < 16; j++ {
			q := wb[2+j]
			s += int32(iq4nlValues[q&15])*int32(int8(xb[2+j])) + int32(iq4nlValues[q>>4])*int32(int8(xb[18+j]))
		}
		sum += float32(s) * (f16At(wb) * f16At(xb))
	}
	return sum
}

// q8K splits a Q8_K block into its scale, quants and 16-element sums.
func q8K(x []byte) (d float32, qs []byte, bsum func(i int) int32) {
	d = math.Float32frombits(binary.LittleEndian.Uint32(x))
	qs = x[4 : 4+256]
	bs := x[260:292]
	return d, qs, func(i int) int32 { return int32(int16(binary.LittleEndian.Uint16(bs[2*i:]))) }
}

func dotQ2KGeneric(w, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		wb := w[b*84 : b*84+84]
		sc := wb[:16]
		q2 := wb[16:80]
		yd, q8, bsum := q8K(x[b*q8KBytes:])
		var summs int32
		for j := 0; j < 16; j++ {
			summs += bsum(j) * int32(sc[j]>>4)
		}
		var isum int32
		for e := 0; e < 256; e++ {
			half, rem := e/128, e%128
			shift, l := uint(rem/32)*2, rem%32
			q := int32(q2[half*32+l]>>shift) & 3
			isum += int32(sc[e/16]&15) * q * int32(int8(q8[e]))
		}
		sum += yd*f16At(wb[80:])*float32(isum) - yd*f16At(wb[82:])*float32(summs)
	}
	return sum
}

// q3KScales unpacks Q3_K's twelve bytes into sixteen 6-bit scales, biased by -32.
func q3KScales(s []byte, out *[16]int32) {
	for j := 0; j < 16; j++ {
		var lo, hi byte
		if j < 8 {
			lo = s[j] & 15
		} else {
			lo = s[j-8] >> 4
		}
		hi = (s[8+j%4] >> (2 * uint(j/4))) & 3
		out[j] = int32(lo|hi<<4) - 32
	}
}

func dotQ3KGeneric(w, x []byte, nb int) float32 {
	var sum float32
	var scales [16]int32
	for b := 0; b < nb; b++ {
		wb := w[b*110 : b*110+110]
		hm, q3 := wb[:32], wb[32:96]
		q3KScales(wb[96:108], &scales)
		yd, q8, _ := q8K(x[b*q8KBytes:])
		var isum int32
		for e := 0; e < 256; e++ {
			half, rem := e/128, e%128
			s, l := uint(rem/32), rem%32
			q := int32(q3[half*32+l]>>(2*s)) & 3
			if hm[l]&(1<<(uint(half)*4+s)) == 0 {
				q -= 4
			}
			isum += scales[e/16] * q * int32(int8(q8[e]))
		}
		sum += f16At(wb[108:]) * yd * float32(isum)
	}
	return sum
}

// kScaleMin decodes the j-th 6-bit scale and min of Q4_K/Q5_K.
func kScaleMin(j int, q []byte) (sc, m int32) {
	if j < 4 {
		return int32(q[j] & 63), int32(q[j+4] & 63)
	}
	return int32(q[j+4]&15 | (q[j-4]>>6)<<4), int32(q[j+4]>>4 | (q[j]>>6)<<4)
}

func dotQ4KGeneric(w, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		wb := w[b*144 : b*144+144]
		scb, qs := wb[4:16], wb[16:144]
		yd, q8, bsum := q8K(x[b*q8KBytes:])
		var isum, msum int32
		for sb := 0; sb < 8; sb++ {
			sc, m := kScaleMin(sb, scb)
			msum += m * (bsum(2*sb) + bsum(2*sb+1))
			q := qs[(sb/2)*32 : (sb/2)*32+32]
			shift := uint(sb%2) * 4
			var s int32
			for l := 0; l < 32; l++ {
				s += int32(q[l]>>shift&15) * int32(int8(q8[sb*32+l]))
			}
			isum += sc * s
		}
		sum += yd*f16At(wb)*float32(isum) - yd*f16At(wb[2:])*float32(msum)
	}
	return sum
}

func dotQ5KGeneric(w, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		wb := w[b*176 : b*176+176]
		scb, qh, qs := wb[4:16], wb[16:48], wb[48:176]
		yd, q8, bsum := q8K(x[b*q8KBytes:])
		var isum, msum int32
		for sb := 0; sb < 8; sb++ {
			sc, m := kScaleMin(sb, scb)
			msum += m * (bsum(2*sb) + bsum(2*sb+1))
			q := qs[(sb/2)*32 : (sb/2)*32+32]
			shift := uint(sb%2) * 4
			var s int32
			for l := 0; l < 32; l++ {
				v := int32(q[l]>>shift&15) | int32(qh[l]>>uint(sb)&1)<<4
				s += v * int32(int8(q8[sb*32+l]))
			}
			isum += sc * s
		}
		sum += yd*f16At(wb)*float32(isum) - yd*f16At(wb[2:])*float32(msum)
	}
	return sum
}

func dotQ6KGeneric(w, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		wb := w[b*210 : b*210+210]
		ql, qh, sc := wb[:128], wb[128:192], wb[192:208]
		yd, q8, _ := q8K(x[b*q8KBytes:])
		var isum int32
		for e := 0; e < 256; e++ {
			half, rem := e/128, e%128
			part, l := rem/32, rem%32
			lo := ql[half*64+l+32*(part&1)] >> (4 * uint(part/2)) & 15
			hi := qh[half*32+l] >> (2 * uint(part)) & 3
			q := int32(lo|hi<<4) - 32
			isum += int32(int8(sc[e/16])) * q * int32(int8(q8[e]))
		}
		sum += f16At(wb[208:]) * yd * float32(isum)
	}
	return sum
}
