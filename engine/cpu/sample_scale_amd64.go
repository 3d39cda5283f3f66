package cpu

import "math"

//go:noescape
func sampleScaleAVX2(l, src *float32, n int, temp float32, ext *[2]float32)

func init() {
	if hasAVX2 {
		sampleScaleRow = sampleScaleRowAVX2
	}
}

// sampleScaleRowAVX2 is sampleScaleRowGeneric with the assembly over the
// multiple of 8 (a finite temperature: the assembly's max and min need
// NaN-free lanes, which an infinite one breaks on infinite logits).
func sampleScaleRowAVX2(l, src []float32, temp, hi, lo float32) (float32, float32) {
	main := len(src) &^ 7
	if main == 0 || math.IsInf(float64(temp), 0) {
		return sampleScaleRowGeneric(l, src, temp, hi, lo)
	}
	ext := [2]float32{hi, lo}
	sampleScaleAVX2(&l[0], &src[0], main, temp, &ext)
	return sampleScaleRowGeneric(l[main:len(src)], src[main:], temp, ext[0], ext[1])
}
