package plan

import "math"

// Logprobs writes the Sample kernel's logprobs record for the drawn token
// tok: its log-softmax over the raw logits x at temperature 1, then the
// top most likely tokens as (id, logprob) pairs, descending, ties to the
// lower id. NaN logits count as -Inf. The normaliser is summed in float64.
// The CPU backend's Sample kernel and Whisper's host beam search (the
// reference for its backend ranking) share it, so their log-probabilities
// agree bit for bit.
func Logprobs(lp, x []float32, tok int32, top int) {
	lmax := math.Inf(-1)
	for _, v := range x {
		if float64(v) > lmax { // false for NaN
			lmax = float64(v)
		}
	}
	var z float64
	if !math.IsInf(lmax, 0) {
		for _, v := range x {
			if v == v {
				z += math.Exp(float64(v) - lmax)
			}
		}
	}
	lse := lmax // -Inf when every logit is; +Inf with an infinite one
	if !math.IsInf(lmax, 0) {
		lse += math.Log(z)
	}
	of := func(v float32) float32 {
		if v != v {
			return float32(math.Inf(-1))
		}
		if math.IsInf(lse, 0) {
			if float64(v) == lse {
				return 0
			}
			return float32(math.Inf(-1))
		}
		return float32(float64(v) - lse)
	}
	clear(lp[:SampleLogprobWords])
	lp[0] = of(x[tok])
	// the top tokens by insertion into a sorted list of at most top
	var bestV [SampleMaxTop]float32
	var bestI [SampleMaxTop]int32
	m := 0
	top = min(max(top, 0), SampleMaxTop)
	for i, v := range x {
		if v != v {
			v = float32(math.Inf(-1))
		}
		if m == top && (top == 0 || !(v > bestV[top-1])) {
			continue // ties keep the lower id, seen first
		}
		if m < top {
			m++
		}
		j := m - 1
		for j > 0 && v > bestV[j-1] {
			bestV[j], bestI[j] = bestV[j-1], bestI[j-1]
			j--
		}
		bestV[j], bestI[j] = v, int32(i)
	}
	for j := range m {
		lp[1+2*j] = math.Float32frombits(uint32(bestI[j]))
		lp[2+2*j] = of(bestV[j])
	}
}
