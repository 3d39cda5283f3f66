package cpu

import (
	"encoding/binary"
	"math"
)

// dequantRow expands one weight row of k elements to float32. It is used
// only for tiles of matrix-matrix products, where the float GEMM reuses
// each dequantized element for many activation rows.
func dequantRow(k *kind, w []byte, out []float32) {
	switch k.id {
	case kindF32:
		copy(out, f32View(w, len(out)))
	case kindF16:
		for i := range out {
			out[i] = f16Table[binary.LittleEndian.Uint16(w[2*i:])]
		}
	case kindBF16:
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(w[2*i:])) << 16)
		}
	default:
		nb := len(out) / k.blockSize
		for b := 0; b < nb; b++ {
			k.dequantBlock(w[b*k.typeSize:(b+1)*k.typeSize], out[b*k.blockSize:(b+1)*k.blockSize])
		}
	}
}

func dequantQ8_0(w []byte, o []float32) {
	d := f16At(w)
	for j := 0; j < 32; j++ {
		o[j] = d * float32(int8(w[2+j]))
	}
}

func dequantQ4_0(w []byte, o []float32) {
	d := f16At(w)
	for j := 0; j < 16; j++ {
		o[j] = d * float32(int32(w[2+j]&15)-8)
		o[j+16] = d * float32(int32(w[2+j]>>4)-8)
	}
}

func dequantQ4_1(w []byte, o []float32) {
	d, m := f16At(w), f16At(w[2:])
	for j := 0; j < 16; j++ {
		o[j] = d*float32(w[4+j]&15) + m
		o[j+16] = d*float32(w[4+j]>>4) + m
	}
}

func dequantQ5_0(w []byte, o []float32) {
	d := f16At(w)
	qh := binary.LittleEndian.Uint32(w[2:])
	for j := 0; j < 16; j++ {
		h0 := int32((qh>>j)<<4) & 0x10
		h1 := int32(qh>>(j+12)) & 0x10
		o[j] = d * float32(int32(w[6+j]&15)|h0-16)
		o[j+16] = d * float32(int32(w[6+j]>>4)|h1-16)
	}
}

func dequantQ5_1(w []byte, o []float32) {
	d, m := f16At(w), f16At(w[2:])
	qh := binary.LittleEndian.Uint32(w[4:])
	for j := 0; j < 16; j++ {
		h0 := int32((qh>>j)<<4) & 0x10
		h1 := int32(qh>>(j+12)) & 0x10
		o[j] = d*float32(int32(w[8+j]&15)|h0) + m
		o[j+16] = d*float32(int32(w[8+j]>>4)|h1) + m
	}
}

func dequantIQ4NL(w []byte, o []float32) {
	d := f16At(w)
	for j := 0; j < 16; j++ {
		o[j] = d * float32(iq4nlValues[w[2+j]&15])
		o[j+16] = d * float32(iq4nlValues[w[2+j]>>4])
	}
}

func dequantQ2K(w []byte, o []float32) {
	sc, q2 := w[:16], w[16:80]
	d, dmin := f16At(w[80:]), f16At(w[82:])
	for e := 0; e < 256; e++ {
		half, rem := e/128, e%128
		shift, l := uint(rem/32)*2, rem%32
		q := float32(q2[half*32+l] >> shift & 3)
		s := sc[e/16]
		o[e] = d*float32(s&15)*q - dmin*float32(s>>4)
	}
}

func dequantQ3K(w []byte, o []float32) {
	var scales [16]int32
	hm, q3 := w[:32], w[32:96]
	q3KScales(w[96:108], &scales)
	d := f16At(w[108:])
	for e := 0; e < 256; e++ {
		half, rem := e/128, e%128
		s, l := uint(rem/32), rem%32
		q := int32(q3[half*32+l]>>(2*s)) & 3
		if hm[l]&(1<<(uint(half)*4+s)) == 0 {
			q -= 4
		}
		o[e] = d * float32(scales[e/16]) * float32(q)
	}
}

func dequantQ4K(w []byte, o []float32) {
	d, dmin := f16At(w), f16At(w[2:])
	scb, qs := w[4:16], w[16:144]
	for sb := 0; sb < 8; sb++ {
		sc, m := kScaleMin(sb, scb)
		d1, m1 := d*float32(sc), dmin*float32(m)
		q := qs[(sb/2)*32:]
		shift := uint(sb%2) * 4
		for l := 0; l < 32; l++ {
			o[sb*32+l] = d1*float32(q[l]>>shift&15) - m1
		}
	}
}

func dequantQ5K(w []byte, o []float32) {
	d, dmin := f16At(w), f16At(w[2:])
	scb, qh, qs := w[4:16], w[16:48], w[48:176]
	for sb := 0; sb < 8; sb++ {
		sc, m := kScaleMin(sb, scb)
		d1, m1 := d*float32(sc), dmin*float32(m)
		q := qs[(sb/2)*32:]
		shift := uint(sb%2) * 4
		for l := 0; l < 32; l++ {
			v := int32(q[l]>>shift&15) | int32(qh[l]>>uint(sb)&1)<<4
			o[sb*32+l] = d1*float32(v) - m1
		}
	}
}

func dequantQ6K(w []byte, o []float32) {
	ql, qh, sc := w[:128], w[128:192], w[192:208]
	d := f16At(w[208:])
	for e := 0; e < 256; e++ {
		half, rem := e/128, e%128
		part, l := rem/32, rem%32
		lo := ql[half*64+l+32*(part&1)] >> (4 * uint(part/2)) & 15
		hi := qh[half*32+l] >> (2 * uint(part)) & 3
		o[e] = d * float32(int8(sc[e/16])) * float32(int32(lo|hi<<4)-32)
	}
}
