package cpu

//go:noescape
func geluErfAVX2(o, a *float32, n int)

func init() {
	if hasAVX2 {
		geluErfRow = geluErfRowFast
	}
}

// geluErfRowFast runs the assembly on whole groups of 8 and the portable
// loop on the tail.
func geluErfRowFast(o, a []float32) {
	o = o[:len(a)]
	main := len(a) &^ 7
	if main > 0 {
		geluErfAVX2(&o[0], &a[0], main)
	}
	geluErfRowGeneric(o[main:], a[main:])
}
