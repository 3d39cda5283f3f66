package cpu

//go:noescape
func sampleBinsAVX2(bins *uint16, l *float32, n int, hi, scale float64)

func init() {
	if hasAVX2 {
		sampleBinsOf = sampleBinsOfAVX2
	}
}

func sampleBinsOfAVX2(bins []uint16, l []float32, s binScale) {
	main := len(l) &^ 3
	if main > 0 {
		sampleBinsAVX2(&bins[0], &l[0], main, s.hi, s.scale)
	}
	sampleBinsOfGeneric(bins[main:len(l)], l[main:], s)
}
