package pulsetest

import "math"

// Align finds where ref[from:from+n] sits in got, searching lags within
// radius of guess (got index = ref index + lag), and returns that lag and
// the normalised correlation there.
func Align(ref, got []float32, from, n, guess, radius int) (int, float64) {
	best, bestLag := -2.0, 0
	for lag := guess - radius; lag <= guess+radius; lag++ {
		if from+lag < 0 || from+n+lag > len(got) {
			continue
		}
		var xy, xx, yy float64
		for i := from; i < from+n; i++ {
			x, y := float64(ref[i]), float64(got[lag+i])
			xy += x * y
			xx += x * x
			yy += y * y
		}
		if c := xy / math.Sqrt(xx*yy+1e-30); c > best {
			best, bestLag = c, lag
		}
	}
	return bestLag, best
}

// Onset is the first 10 ms block louder than -26 dBFS.
func Onset(x []float32) int {
	for i := 0; i+160 <= len(x); i += 80 {
		if rms(x[i:i+160]) > 0.05 {
			return i
		}
	}
	return -1
}

func rms(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(max(len(x), 1)))
}
