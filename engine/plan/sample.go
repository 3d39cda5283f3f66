package plan

// Uniform is the sampler's random number for (seed, step): a value in
// [0, 1) with 24 bits of precision. It is counter-based (splitmix64 of the
// seed and step) so every backend, and a resumed generation, draws the same
// numbers without carrying RNG state.
func Uniform(seed, step uint64) float32 {
	z := seed + (step+1)*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	z ^= z >> 31
	return float32(z>>40) / (1 << 24)
}
