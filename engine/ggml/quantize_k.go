package ggml

import "math"

// Reference quantizers of the K-quants (ggml's quantize_row_*_ref, which
// ggml_quantize_chunk uses when no importance matrix is given). Each fits
// per-sub-block scales with the searches in quantize_search.go, quantizes
// those scales against one half-precision super-scale, and then re-derives
// every code from the scale actually stored.

// weightsAvAbs are the q4_K/q5_K fitting weights: rms(x) + |x_i|.
func weightsAvAbs(x []float32, w []float32) {
	var sumX2 float32
	for _, v := range x {
		sumX2 += float32(v * v)
	}
	av := float32(math.Sqrt(float64(sumX2 / float32(len(x)))))
	for i, v := range x {
		w[i] = av + fabs(v)
	}
}

func quantQ2_K(src []float32, dst []byte) {
	var L [QK_K]uint8
	var laux [16]uint8
	var weights [16]float32
	var scales, mins [16]float32
	const q4scale = 15
	for ; len(src) >= QK_K; src, dst = src[QK_K:], dst[BlockQ2_KBytes:] {
		x, sc, qs := src[:QK_K], dst[0:16], dst[16:80]
		var maxScale, maxMin float32
		for j := range 16 {
			xs := x[16*j : 16*j+16]
			for l, v := range xs {
				weights[l] = fabs(v)
			}
			scales[j], mins[j] = makeQKX2(3, xs, weights[:], L[16*j:16*j+16], laux[:], -0.5, 0.1, 15, true)
			maxScale = max2(maxScale, scales[j])
			maxMin = max2(maxMin, mins[j])
		}
		if maxScale > 0 {
			iscale := q4scale / maxScale
			for j := range 16 {
				sc[j] = uint8(nearestInt(iscale * scales[j]))
			}
			putHalf(dst[80:], maxScale/q4scale)
		} else {
			clear(sc)
			putHalf(dst[80:], 0)
		}
		if maxMin > 0 {
			iscale := q4scale / maxMin
			for j := range 16 {
				sc[j] |= uint8(nearestInt(iscale*mins[j]) << 4)
			}
			putHalf(dst[82:], maxMin/q4scale)
		} else {
			putHalf(dst[82:], 0)
		}
		dAll, dMin := half(dst[80:]), half(dst[82:])
		for j := range 16 {
			d := dAll * float32(sc[j]&0xf)
			if d == 0 {
				continue
			}
			dm := dMin * float32(sc[j]>>4)
			for i := range 16 {
				L[16*j+i] = uint8(clampInt(nearestInt((x[16*j+i]+dm)/d), 0, 3))
			}
		}
		packQ2(L[:], qs)
	}
}

// max2 is C's "if (v > m) m = v" (NaNs never win).
func max2(m, v float32) float32 {
	if v > m {
		return v
	}
	return m
}

// packQ2 stores the low two bits of 256 codes in Q2_K/Q3_K order.
func packQ2(L []uint8, qs []byte) {
	for h := range 2 {
		for l := range 32 {
			b := 128 * h
			qs[32*h+l] = L[b+l]&3 | (L[b+l+32]&3)<<2 | (L[b+l+64]&3)<<4 | (L[b+l+96]&3)<<6
		}
	}
}

func quantQ3_K(src []float32, dst []byte) {
	var L [QK_K]int8
	var scales [16]float32
	for ; len(src) >= QK_K; src, dst = src[QK_K:], dst[BlockQ3_KBytes:] {
		x := src[:QK_K]
		hmask, qs, sc := dst[0:32], dst[32:96], dst[96:108]
		maxScale, _ := subScales(x, &L, &scales, makeQ3, 4)
		clear(sc)
		if maxScale != 0 {
			iscale := -32 / maxScale
			for j := range 16 {
				// ggml stores nearest_int into an int8 before clamping.
				l := uint8(clampInt(int32(int8(nearestInt(iscale*scales[j]))), -32, 31) + 32)
				if j < 8 {
					sc[j] = l & 0xf
				} else {
					sc[j-8] |= (l & 0xf) << 4
				}
				sc[j%4+8] |= (l >> 4) << (2 * (j / 4))
			}
			putHalf(dst[108:], 1/iscale)
		} else {
			putHalf(dst[108:], 0)
		}
		dAll := half(dst[108:])
		stored := Q3KScales(sc)
		for j := range 16 {
			d := dAll * float32(stored[j])
			if d == 0 {
				continue
			}
			for i := range 16 {
				L[16*j+i] = int8(clampInt(nearestInt(x[16*j+i]/d), -4, 3) + 4)
			}
		}
		// Codes 4..7 set their high bit: element e's goes to bit e/32 of
		// hmask[e%32].
		clear(hmask)
		var low [QK_K]uint8
		for e := range QK_K {
			v := uint8(L[e])
			if v > 3 {
				hmask[e%32] |= 1 << (e / 32)
				v -= 4
			}
			low[e] = v
		}
		packQ2(low[:], qs)
	}
}

// packScalesK4 packs 8 6-bit scales and mins as ScaleMinK4 reads them.
func packScalesK4(ls, lm *[8]uint8, out []byte) {
	for j := range 8 {
		if j < 4 {
			out[j] = ls[j]
			out[j+4] = lm[j]
		} else {
			out[j+4] = ls[j]&0xf | (lm[j]&0xf)<<4
			out[j-4] |= (ls[j] >> 4) << 6
			out[j] |= (lm[j] >> 4) << 6
		}
	}
}

// quantK4Like is shared by Q4_K (nmax 15) and Q5_K (nmax 31): it fills the
// header (d, dmin, scales) of dst and the 256 codes in L.
func quantK4Like(x []float32, dst []byte, L *[QK_K]uint8, nmax int32, rmin float32, nstep int) {
	var laux [32]uint8
	var weights [32]float32
	var scales, mins [8]float32
	var maxScale, maxMin float32
	for j := range 8 {
		xs := x[32*j : 32*j+32]
		weightsAvAbs(xs, weights[:])
		scales[j], mins[j] = makeQKX2(nmax, xs, weights[:], L[32*j:32*j+32], laux[:], rmin, 0.1, nstep, false)
		maxScale = max2(maxScale, scales[j])
		maxMin = max2(maxMin, mins[j])
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	var ls, lm [8]uint8
	for j := range 8 {
		ls[j] = min(63, uint8(nearestInt(invScale*scales[j])))
		lm[j] = min(63, uint8(nearestInt(invMin*mins[j])))
	}
	packScalesK4(&ls, &lm, dst[4:16])
	putHalf(dst, maxScale/63)
	putHalf(dst[2:], maxMin/63)
	dAll, dMin := half(dst), half(dst[2:])
	for j := range 8 {
		sc, m := ScaleMinK4(j, dst[4:16])
		d := dAll * float32(sc)
		if d == 0 {
			continue
		}
		dm := dMin * float32(m)
		for i := range 32 {
			L[32*j+i] = uint8(clampInt(nearestInt((x[32*j+i]+dm)/d), 0, nmax))
		}
	}
}

func quantQ4_K(src []float32, dst []byte) {
	var L [QK_K]uint8
	for ; len(src) >= QK_K; src, dst = src[QK_K:], dst[BlockQ4_KBytes:] {
		quantK4Like(src[:QK_K], dst, &L, 15, -1, 20)
		qs := dst[16:144]
		for c := range 4 {
			for l := range 32 {
				qs[32*c+l] = L[64*c+l] | L[64*c+l+32]<<4
			}
		}
	}
}

func quantQ5_K(src []float32, dst []byte) {
	var L [QK_K]uint8
	for ; len(src) >= QK_K; src, dst = src[QK_K:], dst[BlockQ5_KBytes:] {
		quantK4Like(src[:QK_K], dst, &L, 31, -0.5, 15)
		qh, qs := dst[16:48], dst[48:176]
		clear(qh)
		for e := range QK_K {
			if L[e] > 15 {
				qh[e%32] |= 1 << (e / 32)
			}
		}
		for c := range 4 {
			for l := range 32 {
				qs[32*c+l] = L[64*c+l]&0xf | (L[64*c+l+32]&0xf)<<4
			}
		}
	}
}

func quantQ6_K(src []float32, dst []byte) {
	var L [QK_K]int8
	var scales [16]float32
	for ; len(src) >= QK_K; src, dst = src[QK_K:], dst[BlockQ6_KBytes:] {
		x := src[:QK_K]
		ql, qh, sc := dst[0:128], dst[128:192], dst[192:208]
		maxScale, maxAbs := subScales(x, &L, &scales, makeQX, 32)
		if maxAbs < groupMaxEps {
			clear(dst[:BlockQ6_KBytes])
			continue
		}
		iscale := -128 / maxScale
		putHalf(dst[208:], 1/iscale)
		for j := range 16 {
			sc[j] = byte(int8(min(127, nearestInt(iscale*scales[j]))))
		}
		dAll := half(dst[208:])
		for j := range 16 {
			d := dAll * float32(int8(sc[j]))
			if d == 0 {
				continue
			}
			for i := range 16 {
				L[16*j+i] = int8(clampInt(nearestInt(x[16*j+i]/d), -32, 31) + 32)
			}
		}
		for h := range 2 {
			b := 128 * h
			for l := range 32 {
				q1, q2, q3, q4 := uint8(L[b+l]), uint8(L[b+l+32]), uint8(L[b+l+64]), uint8(L[b+l+96])
				ql[64*h+l] = q1&0xf | (q3&0xf)<<4
				ql[64*h+l+32] = q2&0xf | (q4&0xf)<<4
				qh[32*h+l] = q1>>4 | (q2>>4)<<2 | (q3>>4)<<4 | (q4>>4)<<6
			}
		}
	}
}

// subScales sets the scales (and codes L) of the 16 sub-blocks of 16 in a
// super-block x with search and nmax, and returns the scale of the largest
// magnitude (the first of equals) and that magnitude.
func subScales(x []float32, L *[QK_K]int8, scales *[16]float32, search func(nmax int32, x []float32, L []int8) float32, nmax int32) (maxScale, maxAbs float32) {
	for j := range 16 {
		scales[j] = search(nmax, x[16*j:16*j+16], L[16*j:16*j+16])
		if a := fabs(scales[j]); a > maxAbs {
			maxAbs, maxScale = a, scales[j]
		}
	}
	return maxScale, maxAbs
}
