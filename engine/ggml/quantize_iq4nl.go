package ggml

// IQ4_NL quantization. ggml has two: ggml_quantize_chunk (what llama.cpp's
// quantize tool and Quantize use) searches 15 scales and then re-picks every
// code with the final scale; the reference quantize_row_iq4_nl_ref keeps the
// first pass's codes and least-squares scale. Both are reproduced.

// bestIndexIQ4 returns the code whose table value is nearest to v (the
// lower one on ties), by the same bisection ggml uses.
func bestIndexIQ4(v float32) uint8 {
	vals := &KValuesIQ4NL
	if v <= float32(vals[0]) {
		return 0
	}
	if v >= float32(vals[15]) {
		return 15
	}
	lo, hi := 0, 15
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if v < float32(vals[mid]) {
			hi = mid
		} else {
			lo = mid
		}
	}
	if v-float32(vals[hi-1]) < float32(vals[hi])-v {
		return uint8(hi - 1)
	}
	return uint8(hi)
}

// iq4nlSums accumulates the x²-weighted least-squares terms for scale 1/id.
func iq4nlSums(x []float32, id float32, L []uint8) (sumQX, sumQ2 float32) {
	for j, v := range x {
		l := bestIndexIQ4(float32(id * v))
		if L != nil {
			L[j] = l
		}
		q := float32(KValuesIQ4NL[l])
		w := float32(v * v)
		sumQX += float32(float32(w*q) * v)
		sumQ2 += float32(float32(w*q) * q)
	}
	return sumQX, sumQ2
}

// quantIQ4NLBlocks quantizes with ggml's search width ntry (7 for the chunk
// quantizer, -1 for the reference one). L carries over between blocks on
// purpose: ggml leaves an all-zero block's codes as they were, and the
// reference quantizer then packs the previous block's codes.
func quantIQ4NLBlocks(src []float32, dst []byte, ntry int) {
	var L [QK4_NL]uint8
	for ; len(src) >= QK4_NL; src, dst = src[QK4_NL:], dst[BlockIQ4NLBytes:] {
		x := src[:QK4_NL]
		var scale float32
		if mx, amax := signedMax(x); amax >= groupMaxEps {
			v0 := float32(KValuesIQ4NL[0])
			var d float32
			if ntry > 0 {
				d = -mx / v0
			} else {
				d = mx / v0
			}
			sumQX, sumQ2 := iq4nlSums(x, 1/d, L[:])
			d = 0
			if sumQ2 > 0 {
				d = sumQX / sumQ2
			}
			best := float32(d * sumQX)
			for itry := -ntry; itry <= ntry; itry++ {
				id := float32(itry+int(KValuesIQ4NL[0])) / mx
				sqx, sq2 := iq4nlSums(x, id, nil)
				if sq2 > 0 && float32(sqx*sqx) > float32(best*sq2) {
					d = sqx / sq2
					best = float32(d * sqx)
				}
			}
			scale = d
		}
		putHalf(dst, scale)
		if ntry > 0 {
			var id float32
			if scale != 0 {
				id = 1 / scale
			}
			for j, v := range x {
				L[j] = bestIndexIQ4(float32(id * v))
			}
		}
		for j := range 16 {
			dst[2+j] = L[j] | L[16+j]<<4
		}
	}
}

// quantIQ4NL matches ggml_quantize_chunk (iq4_nl.quant.bin).
func quantIQ4NL(src []float32, dst []byte) { quantIQ4NLBlocks(src, dst, 7) }

// QuantizeIQ4NLRef is ggml's quantize_row_iq4_nl_ref (iq4_nl.quant_ref.bin):
// a cheaper, slightly less accurate IQ4_NL quantizer. dst must hold exactly
// RowBytes(IQ4_NL, len(src)) bytes.
func QuantizeIQ4NLRef(src []float32, dst []byte) error {
	if err := checkLen(IQ4_NL, len(src), len(dst)); err != nil {
		return err
	}
	quantIQ4NLBlocks(src, dst, -1)
	return nil
}
