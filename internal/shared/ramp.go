package shared

// Ramp returns n samples counting up from start/1e5 (wrapping at 20000):
// every sample differs from its neighbours, so a lost, repeated or
// reordered write shows. 16-bit files hold them only approximately:
// compare within quantisation.
func Ramp(start, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32((start+i)%20000) / 1e5
	}
	return x
}
