package plan

import "math"

// LogSumExp is log Σ exp(s) with the exponentials summed in float64 for
// stability; −Inf when every entry is −Inf. Whisper's host filter and the
// CPU's WhisperFilter share it, so their timestamp decisions agree bit
// for bit.
func LogSumExp(s []float32) float32 {
	m := MaxF32(s)
	if math.IsInf(float64(m), -1) {
		return m
	}
	return m + float32(math.Log(expSum(s, m)))
}

// expSumGo is Σ exp(float64(v − m)) over s, added in order.
func expSumGo(s []float32, m float32, sum float64) float64 {
	for _, v := range s {
		sum += math.Exp(float64(v - m))
	}
	return sum
}
