package plan

import "math"

// Uniform is the sampler's random number for (seed, step): a value in
// [0, 1) with 24 bits of precision. It is counter-based (splitmix64 of the
// seed and step) so every backend, and a resumed generation, draws the same
// numbers without carrying RNG state.
func Uniform(seed, step uint64) float32 {
	return float32(Uniform24(seed, step)) / (1 << 24)
}

// Bounds and layout of the Sample kernel's step data.
const (
	SampleMaxBias = 300 // logit_bias entries
	SampleMaxTop  = 20  // top logprobs
	// SampleSettingsWords is the size of an encoded SampleSettings: a
	// header of SampleSetBias words, then (id, bias) word pairs.
	SampleSettingsWords = SampleSetBias + 2*SampleMaxBias
	// SampleLogprobWords is one draw's logprobs record: the drawn token's
	// logprob, then SampleMaxTop (id, logprob) pairs.
	SampleLogprobWords = 1 + 2*SampleMaxTop
	// SampleDrawWords is one draw of a Sample dispatch with draws bound:
	// its slot, its logits row and its step (the Step param's u32).
	SampleDrawWords = 3
)

// sampleDraws is the draws a Sample dispatch makes (its grid's y).
func sampleDraws(a *SampleArgs) int {
	if a.Draws.Buf == NoBuf {
		return 1
	}
	return a.M
}

// sampleSlots is the records each per-slot binding of a Sample dispatch
// holds.
func sampleSlots(a *SampleArgs) int {
	if a.Draws.Buf == NoBuf {
		return 1
	}
	return a.Slots
}

// sampleX is a Sample dispatch's logits: one row, or xRows of ldx.
func sampleX(a *SampleArgs) span {
	if a.Draws.Buf == NoBuf {
		return f32Vec(a.N)
	}
	return f32Rows(a.XRows, a.Ldx, a.N)
}

// Word offsets of an encoded SampleSettings (sample.metal mirrors them).
const (
	SampleSetTopK      = 0  // u32
	SampleSetTopP      = 1  // f32, 1 = off
	SampleSetMinP      = 2  // f32, 0 = off
	SampleSetTemp      = 3  // f32, <= 0: argmax
	SampleSetRepeat    = 4  // f32, 0 or 1 = off
	SampleSetPresence  = 5  // f32
	SampleSetFrequency = 6  // f32
	SampleSetSeedLo    = 7  // u32
	SampleSetSeedHi    = 8  // u32
	SampleSetLogprobs  = 9  // u32: 0 = off, else 1 + the number of top logprobs
	SampleSetNBias     = 10 // u32
	SampleSetBias      = 16 // the first (id, bias) pair
)

// CountSampled adds token id to counts, the Sample kernel's token counts
// for a vocabulary of n (counts[0:n), the number of distinct ids at
// counts[n], then those ids): what the kernel does with each drawn token,
// and the host with the tokens counted before a generation. A count below
// 0 counts as 0; the list never grows past n.
func CountSampled(counts []int32, n int, id int32) {
	if id < 0 || int(id) >= n {
		return
	}
	if counts[id] <= 0 {
		counts[id] = 0
		if d := counts[n]; d >= 0 && int(d) < n {
			counts[n+1+int(d)] = id
			counts[n] = d + 1
		}
	}
	counts[id]++
}

// SampleSettings are the sampler settings of one generation, written by
// the host into the Sample dispatch's settings buffer; the draw counter
// (the step) is the only per-token value.
type SampleSettings struct {
	TopK      int
	TopP      float32 // 1 = off
	MinP      float32
	Temp      float32
	Repeat    float32 // 0 or 1 = off
	Presence  float32
	Frequency float32
	Seed      uint64
	// Logprobs asks for the drawn token's logprob and Top of the most
	// likely tokens (0..SampleMaxTop).
	Logprobs bool
	Top      int
	// BiasIDs and Bias are the logit_bias entries (distinct ids, at most
	// SampleMaxBias).
	BiasIDs []int32
	Bias    []float32
}

// Penalties reports whether the settings use the token counts.
func (s *SampleSettings) Penalties() bool {
	return (s.Repeat != 0 && s.Repeat != 1) || s.Presence != 0 || s.Frequency != 0
}

// Encode writes s into w (SampleSettingsWords words): ranges are
// clamped, so the kernel never reads past its bounds.
func (s *SampleSettings) Encode(w []uint32) {
	clear(w[:SampleSettingsWords])
	w[SampleSetTopK] = uint32(max(s.TopK, 0))
	w[SampleSetTopP] = math.Float32bits(s.TopP)
	w[SampleSetMinP] = math.Float32bits(s.MinP)
	w[SampleSetTemp] = math.Float32bits(s.Temp)
	w[SampleSetRepeat] = math.Float32bits(s.Repeat)
	w[SampleSetPresence] = math.Float32bits(s.Presence)
	w[SampleSetFrequency] = math.Float32bits(s.Frequency)
	w[SampleSetSeedLo], w[SampleSetSeedHi] = uint32(s.Seed), uint32(s.Seed>>32)
	if s.Logprobs {
		w[SampleSetLogprobs] = 1 + uint32(min(max(s.Top, 0), SampleMaxTop))
	}
	nb := min(len(s.BiasIDs), len(s.Bias), SampleMaxBias)
	w[SampleSetNBias] = uint32(nb)
	for i := range nb {
		w[SampleSetBias+2*i] = uint32(s.BiasIDs[i])
		w[SampleSetBias+2*i+1] = math.Float32bits(s.Bias[i])
	}
}

// Decode reads an encoded SampleSettings into s, reusing its bias
// slices, and clamps the counts a hostile or stale buffer may hold.
func (s *SampleSettings) Decode(w []uint32) {
	*s = SampleSettings{
		TopK: int(w[SampleSetTopK]), TopP: math.Float32frombits(w[SampleSetTopP]),
		MinP: math.Float32frombits(w[SampleSetMinP]), Temp: math.Float32frombits(w[SampleSetTemp]),
		Repeat: math.Float32frombits(w[SampleSetRepeat]), Presence: math.Float32frombits(w[SampleSetPresence]),
		Frequency: math.Float32frombits(w[SampleSetFrequency]),
		Seed:      uint64(w[SampleSetSeedLo]) | uint64(w[SampleSetSeedHi])<<32,
		BiasIDs:   s.BiasIDs[:0], Bias: s.Bias[:0],
	}
	if lp := w[SampleSetLogprobs]; lp > 0 {
		s.Logprobs, s.Top = true, int(min(lp-1, SampleMaxTop))
	}
	nb := int(min(w[SampleSetNBias], SampleMaxBias))
	for i := range nb {
		s.BiasIDs = append(s.BiasIDs, int32(w[SampleSetBias+2*i]))
		s.Bias = append(s.Bias, math.Float32frombits(w[SampleSetBias+2*i+1]))
	}
}
