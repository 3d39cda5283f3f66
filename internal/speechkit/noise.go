package speechkit

import (
	"math"
	"math/rand/v2"
)

// Noisy is x with white Gaussian noise at snrDB below x's mean power,
// drawn from seed: the same seed gives the same samples on every machine
// (the evaluation set is committed clean; tests add the noise).
func Noisy(x []float32, snrDB float64, seed uint64) []float32 {
	var p float64
	for _, v := range x {
		p += float64(v) * float64(v)
	}
	p /= float64(max(1, len(x)))
	sd := math.Sqrt(p / math.Pow(10, snrDB/10))
	r := rand.New(rand.NewPCG(seed, 39))
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = v + float32(sd*r.NormFloat64())
	}
	return out
}

// speakingGain lifts the passage (peak -30 dBFS, kept quiet so that the
// FLAC stays small) to a speaking level (-10 dBFS).
const speakingGain = 10

// Speaking is x at a speaking level, in a new slice: for audio played
// through the capture path.
func Speaking(x []float32) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = speakingGain * v
	}
	return out
}
