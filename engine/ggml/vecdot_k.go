package ggml

import (
	"encoding/binary"
	"math"
)

// Dot products of the K-quants with Q8_K activations. ggml's scalar code
// accumulates the scaled integer sums in eight float lanes (element index
// mod 8) across super-blocks and adds the lanes at the end; we keep that
// structure so the float rounding matches.

func q8kD(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

func q8kBsum(b []byte, j int) int32 {
	return int32(int16(binary.LittleEndian.Uint16(b[260+2*j:])))
}

// laneDot adds scale(e)·a[e]·q8[e] into lane e%8 for one super-block.
func laneDot(a *[QK_K]int32, q8 []byte, scale func(e int) int32, lanes *[8]int32) {
	*lanes = [8]int32{}
	for e := range QK_K {
		lanes[e&7] += scale(e) * a[e] * int32(int8(q8[e]))
	}
}

// addLanes folds one super-block's integer lanes into the float lanes.
func addLanes(sums *[8]float32, d float32, lanes *[8]int32) {
	for l := range 8 {
		sums[l] += float32(d * float32(lanes[l]))
	}
}

func dotQ2_K(n int, w, act []byte) float32 {
	var sum float32
	for ; n > 0; n, w, act = n-QK_K, w[BlockQ2_KBytes:], act[BlockQ8_KBytes:] {
		sc, qs, q8 := w[0:16], w[16:80], act[4:260]
		var summs int32
		for j := range 16 {
			summs += q8kBsum(act, j) * int32(sc[j]>>4)
		}
		yd := q8kD(act)
		dall, dmin := yd*half(w[80:]), yd*half(w[82:])
		var isum int32
		for s := range 16 {
			// Sub-block s covers e = 16s..16s+15: e = 128h + 32j + l.
			var isuml int32
			for e := 16 * s; e < 16*s+16; e++ {
				h, j, l := e/128, (e%128)/32, e%32
				isuml += int32(int8(q8[e])) * int32((qs[32*h+l]>>(2*j))&3)
			}
			isum += int32(sc[s]&0xf) * isuml
		}
		sum += float32(dall*float32(isum)) - float32(dmin*float32(summs))
	}
	return sum
}

func dotQ3_K(n int, w, act []byte) float32 {
	var sums [8]float32
	var a [QK_K]int32
	var lanes [8]int32
	for ; n > 0; n, w, act = n-QK_K, w[BlockQ3_KBytes:], act[BlockQ8_KBytes:] {
		hm, qs := w[0:32], w[32:96]
		scales := Q3KScales(w[96:108])
		for e := range QK_K {
			h, j, l := e/128, (e%128)/32, e%32
			a[e] = int32((qs[32*h+l] >> (2 * j)) & 3)
			if hm[l]&(1<<(4*h+j)) == 0 {
				a[e] -= 4
			}
		}
		laneDot(&a, act[4:260], func(e int) int32 { return int32(scales[e/16]) }, &lanes)
		addLanes(&sums, half(w[108:])*q8kD(act), &lanes)
	}
	var sum float32
	for _, s := range sums {
		sum += s
	}
	return sum
}

// dotK4Like is shared by Q4_K and Q5_K, which differ only in how codes are
// stored: codes(a) fills the 256 codes of the current block.
func dotK4Like(n, blockBytes int, w, act []byte, codes func(w []byte, a *[QK_K]int32)) float32 {
	var sums [8]float32
	var a [QK_K]int32
	var lanes [8]int32
	var sum float32
	for ; n > 0; n, w, act = n-QK_K, w[blockBytes:], act[BlockQ8_KBytes:] {
		var sc, mn [8]int32
		for s := range 8 {
			x, m := ScaleMinK4(s, w[4:16])
			sc[s], mn[s] = int32(x), int32(m)
		}
		codes(w, &a)
		var sumi int32
		for j := range 16 {
			sumi += q8kBsum(act, j) * mn[j/2]
		}
		laneDot(&a, act[4:260], func(e int) int32 { return sc[e/32] }, &lanes)
		yd := q8kD(act)
		addLanes(&sums, half(w)*yd, &lanes)
		sum -= float32(float32(half(w[2:])*yd) * float32(sumi))
	}
	for _, s := range sums {
		sum += s
	}
	return sum
}

func q4KCodes(w []byte, a *[QK_K]int32) {
	qs := w[16:144]
	for e := range QK_K {
		c, l := e/64, e%64
		a[e] = int32(qs[32*c+l%32]>>(4*uint(l/32))) & 0xf
	}
}

func q5KCodes(w []byte, a *[QK_K]int32) {
	qh, qs := w[16:48], w[48:176]
	for e := range QK_K {
		c, l := e/64, e%64
		a[e] = int32(qs[32*c+l%32]>>(4*uint(l/32))) & 0xf
		a[e] |= int32((qh[e%32]>>(e/32))&1) << 4
	}
}

func dotQ4_K(n int, w, act []byte) float32 { return dotK4Like(n, BlockQ4_KBytes, w, act, q4KCodes) }

func dotQ5_K(n int, w, act []byte) float32 { return dotK4Like(n, BlockQ5_KBytes, w, act, q5KCodes) }

func dotQ6_K(n int, w, act []byte) float32 {
	var sums [8]float32
	var a [QK_K]int32
	var lanes [8]int32
	for ; n > 0; n, w, act = n-QK_K, w[BlockQ6_KBytes:], act[BlockQ8_KBytes:] {
		ql, qh, sc := w[0:128], w[128:192], w[192:208]
		for e := range QK_K {
			h, k, l := e/128, (e%128)/32, e%32
			lo := ql[64*h+l+32*(k&1)]
			if k >= 2 {
				lo >>= 4
			}
			a[e] = (int32(lo&0xf) | int32((qh[32*h+l]>>(2*k))&3)<<4) - 32
		}
		laneDot(&a, act[4:260], func(e int) int32 { return int32(int8(sc[e/16])) }, &lanes)
		addLanes(&sums, half(w[208:])*q8kD(act), &lanes)
	}
	var sum float32
	for _, s := range sums {
		sum += s
	}
	return sum
}
