package plan

import "math"

// MaxF32 is the largest entry of s as the max builtin folds it: −Inf when s
// is empty, NaN when any entry is NaN, +0 over −0. Whisper's filters take
// it over the 51,864 logits of every step, where a scalar loop of the
// builtin (a dependent chain with its NaN and signed-zero fix-ups) cost
// more than the exponentials.
func MaxF32(s []float32) float32 { return maxF32(s) }

// maxF32Go is MaxF32 one entry at a time.
func maxF32Go(s []float32) float32 {
	m := float32(math.Inf(-1))
	for _, v := range s {
		m = max(m, v)
	}
	return m
}
