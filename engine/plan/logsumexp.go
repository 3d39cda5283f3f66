package plan

import "math"

// LSEBlock is the run of entries LogSumExp adds in order: the blocks' sums
// are then added in block order. A backend that sums the blocks in
// parallel (the CPU's pool over a Whisper step's 51,864 logits, where one
// chain of dependent float64 adds cost more than the exponentials) gets
// the same bits as the host.
const LSEBlock = 2048

// LogSumExp is log Σ exp(s) with the exponentials summed in float64 for
// stability (ExpSum over each LSEBlock of s, then the blocks in order); −Inf
// when every entry is −Inf. Whisper's host filter and the CPU's
// WhisperFilter share it, so their timestamp decisions agree bit for bit.
func LogSumExp(s []float32) float32 {
	m := MaxF32(s)
	if math.IsInf(float64(m), -1) {
		return m
	}
	var sum float64
	for lo := 0; lo < len(s); lo += LSEBlock {
		sum += ExpSum(s[lo:min(lo+LSEBlock, len(s))], m)
	}
	return LogOfSum(m, sum)
}

// LogOfSum is LogSumExp's last step: m (the largest entry) plus the log of
// the blocks' exponential sums added in order.
func LogOfSum(m float32, sum float64) float32 { return m + float32(math.Log(sum)) }

// ExpSum is Σ exp(float64(v − m)) over s, added in order.
func ExpSum(s []float32, m float32) float64 { return expSum(s, m) }

// expSumGo is Σ exp(float64(v − m)) over s, added in order.
func expSumGo(s []float32, m float32, sum float64) float64 {
	for _, v := range s {
		sum += math.Exp(float64(v - m))
	}
	return sum
}
