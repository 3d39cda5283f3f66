package cpu

//go:noescape
func maxScaledAVX2(s *float32, n int, scale float32) float32

//go:noescape
func scaleAVX2(s *float32, n int, c float32)

func init() {
	if hasAVX2 {
		softmaxScaled = softmaxScaledFast
		maxRow = maxScaledFast
	}
}

// softmaxScaledFast is softmaxScaledGeneric with the maximum and the final
// scaling in AVX2 on whole groups of 8 (the exponential already is): the
// encoder's attention runs them over 1500 scores per query and head.
func softmaxScaledFast(s []float32, scale float32) {
	main := len(s) &^ 7
	if main == 0 {
		softmaxScaledGeneric(s, scale)
		return
	}
	mx := maxScaledFast(s, scale)
	inv := float32(1 / expScaled(s, scale, mx))
	scaleAVX2(&s[0], main, inv)
	for j := main; j < len(s); j++ {
		s[j] *= inv
	}
}

// maxScaledFast is maxScaled with whole groups of 8 in AVX2.
func maxScaledFast(s []float32, scale float32) float32 {
	main := len(s) &^ 7
	if main == 0 {
		return maxScaled(s, scale)
	}
	mx := maxScaledAVX2(&s[0], main, scale)
	for _, v := range s[main:] {
		if t := v * scale; t > mx {
			mx = t
		}
	}
	return mx
}
