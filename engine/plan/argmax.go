package plan

// ArgmaxRow is the Argmax kernel's answer for one row, written once for
// every host-side use (the CPU backend's kernel and sampler, the LLM and
// Whisper greedy decoders): the index of the largest value, the lowest
// index on ties; NaNs never win (an all-NaN or empty row gives 0).
func ArgmaxRow(x []float32) int {
	best := -1
	var bv float32
	for i, v := range x {
		if v != v {
			continue
		}
		if best < 0 || v > bv {
			best, bv = i, v
		}
	}
	return max(best, 0)
}
