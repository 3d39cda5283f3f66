package cpu

//go:noescape
func expScaledAVX2(s *float32, n int, scale, sub float32) float32

func init() {
	if hasAVX2 {
		expScaled = expScaledFast
	}
}

func expScaledFast(s []float32, scale, sub float32) float64 {
	main := len(s) &^ 7
	var sum float64
	if main > 0 {
		sum = float64(expScaledAVX2(&s[0], main, scale, sub))
	}
	return sum + expScaledGeneric(s[main:], scale, sub)
}
