package plan

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSampleSettingsRoundTrip: settings survive encoding, the seed's
// halves land in their words, and counts past the bounds are clamped on
// both sides (a hostile buffer cannot make a kernel read past it).
func TestSampleSettingsRoundTrip(t *testing.T) {
	s := SampleSettings{TopK: 40, TopP: 0.9, MinP: 0.05, Temp: 0.7, Repeat: 1.1, Presence: 0.2, Frequency: 0.3,
		Seed: 1<<40 | 12345, Logprobs: true, Top: 5, BiasIDs: []int32{3, 9}, Bias: []float32{-100, 2.5}}
	w := make([]uint32, SampleSettingsWords)
	s.Encode(w)
	require.Equal(t, uint32(12345), w[SampleSetSeedLo])
	require.Equal(t, uint32(1<<8), w[SampleSetSeedHi])
	require.Equal(t, uint32(6), w[SampleSetLogprobs])
	require.Equal(t, math.Float32bits(2.5), w[SampleSetBias+3])
	var got SampleSettings
	got.Decode(w)
	require.Equal(t, s, got)

	w[SampleSetNBias], w[SampleSetLogprobs] = 1<<31, 1000
	got.Decode(w)
	require.Len(t, got.BiasIDs, SampleMaxBias)
	require.Equal(t, SampleMaxTop, got.Top)

	big := SampleSettings{Top: 99, Logprobs: true, BiasIDs: make([]int32, 400), Bias: make([]float32, 400)}
	big.Encode(w)
	require.Equal(t, uint32(SampleMaxBias), w[SampleSetNBias])
	require.Equal(t, uint32(1+SampleMaxTop), w[SampleSetLogprobs])
}
