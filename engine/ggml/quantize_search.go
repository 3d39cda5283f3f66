package ggml

import "math"

// The scale searches ggml's K-quant reference quantizers run per sub-block.
// They are transcribed operation for operation (float32 throughout, each
// product explicitly rounded before it is added: float32(a*b) keeps the
// compiler from fusing into an FMA) because the chosen codes depend on the
// last bit of every sum.

// groupMaxEps is the magnitude below which ggml treats a group as zero.
const groupMaxEps = 1e-15

func fabs(v float32) float32 { return float32(math.Abs(float64(v))) }

func clampInt(l, lo, hi int32) int32 { return max(lo, min(hi, l)) }

// makeQKX2 fits x ≈ scale·L + min (min <= 0, L in 0..nmax) minimising the
// weighted squared (or, with useMad, absolute) error, trying nstep+1
// perturbed scales around (max-min)/nmax. It returns scale and -min.
func makeQKX2(nmax int32, x, weights []float32, L, laux []uint8, rmin, rdelta float32, nstep int, useMad bool) (scale, negMin float32) {
	n := len(x)
	lo, hi := x[0], x[0]
	sumW := weights[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < n; i++ {
		if x[i] < lo {
			lo = x[i]
		}
		if x[i] > hi {
			hi = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if lo > 0 {
		lo = 0
	}
	if hi == lo {
		clear(L[:n])
		return 0, -lo
	}
	fmax := float32(nmax)
	iscale := fmax / (hi - lo)
	scale = 1 / iscale
	errOf := func(sc, mn float32, q []uint8) float32 {
		var e float32
		for i := range n {
			diff := float32(float32(sc*float32(q[i]))+mn) - x[i]
			if useMad {
				diff = fabs(diff)
			} else {
				diff = float32(diff * diff)
			}
			e += float32(weights[i] * diff)
		}
		return e
	}
	for i := range n {
		L[i] = uint8(clampInt(nearestInt(float32(iscale*float32(x[i]-lo))), 0, nmax))
	}
	best := errOf(scale, lo, L)
	if nstep < 1 {
		return scale, -lo
	}
	for is := 0; is <= nstep; is++ {
		iscale = float32(float32(rmin+float32(rdelta*float32(is)))+fmax) / (hi - lo)
		var sumL, sumL2, sumXL float32
		for i := range n {
			l := clampInt(nearestInt(float32(iscale*float32(x[i]-lo))), 0, nmax)
			laux[i] = uint8(l)
			w, fl := weights[i], float32(l)
			sumL += float32(w * fl)
			sumL2 += float32(float32(w*fl) * fl)
			sumXL += float32(float32(w*fl) * x[i])
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D > 0 {
			thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
			thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			if cur := errOf(thisScale, thisMin, laux); cur < best {
				copy(L[:n], laux[:n])
				best, scale, lo = cur, thisScale, thisMin
			}
		}
	}
	return scale, -lo
}

// signedMax returns the element of largest magnitude (first one on ties).
func signedMax(x []float32) (mx, amax float32) {
	for _, v := range x {
		if a := fabs(v); a > amax {
			amax, mx = a, v
		}
	}
	return mx, amax
}

// makeQ3 is ggml's make_q3_quants with do_rmse: a symmetric fit with codes
// in -nmax..nmax-1, refined by up to five passes of coordinate descent on
// the x²-weighted error. L receives codes offset by nmax.
func makeQ3(nmax int32, x []float32, L []int8) float32 {
	n := len(x)
	mx, amax := signedMax(x)
	if amax < groupMaxEps {
		clear(L[:n])
		return 0
	}
	iscale := -float32(nmax) / mx
	var sumLX, sumL2 float32
	for i := range n {
		l := clampInt(nearestInt(float32(iscale*x[i])), -nmax, nmax-1)
		L[i] = int8(l)
		w, fl := float32(x[i]*x[i]), float32(l)
		sumLX += float32(float32(w*x[i]) * fl)
		sumL2 += float32(float32(w*fl) * fl)
	}
	for range 5 {
		changed := 0
		for i := range n {
			w := float32(x[i] * x[i])
			li := float32(L[i])
			slx := sumLX - float32(float32(w*x[i])*li)
			if slx > 0 {
				sl2 := sumL2 - float32(float32(w*li)*li)
				nl := clampInt(nearestInt(float32(x[i]*sl2)/slx), -nmax, nmax-1)
				if nl != int32(L[i]) {
					fn := float32(nl)
					slx += float32(float32(w*x[i]) * fn)
					sl2 += float32(float32(w*fn) * fn)
					if sl2 > 0 && float32(float32(slx*slx)*sumL2) > float32(float32(sumLX*sumLX)*sl2) {
						L[i], sumLX, sumL2 = int8(nl), slx, sl2
						changed++
					}
				}
			}
		}
		if changed == 0 {
			break
		}
	}
	for i := range n {
		L[i] += int8(nmax)
	}
	if sumL2 > 0 {
		return sumLX / sumL2
	}
	return 0
}

// makeQX is ggml's make_qx_quants with rmse_type 1 (weights x²) and no
// importance matrix: a symmetric fit with codes in -nmax..nmax-1, trying 18
// scales around nmax/max and keeping the best least-squares one. L receives
// codes offset by nmax.
func makeQX(nmax int32, x []float32, L []int8) float32 {
	n := len(x)
	mx, amax := signedMax(x)
	if amax < groupMaxEps {
		clear(L[:n])
		return 0
	}
	sums := func(iscale float32) (sumLX, sumL2 float32) {
		for i := range n {
			fl := float32(clampInt(nearestInt(float32(iscale*x[i])), -nmax, nmax-1))
			w := float32(x[i] * x[i])
			sumLX += float32(float32(w*x[i]) * fl)
			sumL2 += float32(float32(w*fl) * fl)
		}
		return sumLX, sumL2
	}
	fill := func(iscale float32) {
		for i := range n {
			L[i] = int8(nmax + clampInt(nearestInt(float32(iscale*x[i])), -nmax, nmax-1))
		}
	}
	iscale := -float32(nmax) / mx
	fill(iscale)
	sumLX, sumL2 := sums(iscale)
	var scale float32
	if sumL2 != 0 {
		scale = sumLX / sumL2
	}
	best := float32(scale * sumLX)
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(float32(nmax) + float32(0.1*float32(is))) / mx
		sumLX, sumL2 = sums(iscale)
		if sumL2 > 0 && float32(sumLX*sumLX) > float32(best*sumL2) {
			fill(iscale)
			scale = sumLX / sumL2
			best = float32(scale * sumLX)
		}
	}
	return scale
}
