package llm

import (
	"fmt"
	"math"
)

// ropeFreqs returns the inverse frequencies the Rope kernels read:
// freq[i] = base^(-2i/ropeDim), then the context scaling. factors, when
// not nil, is the file's rope_freqs.weight (Llama 3.1 GGUF files carry
// their scaling that way); each frequency is divided by its factor, as
// llama.cpp does.
func ropeFreqs(h HParams, factors []float32) ([]float32, error) {
	half := h.RopeDim / 2
	if factors != nil && len(factors) != half {
		return nil, fmt.Errorf("llm: rope_freqs.weight has %d values, want %d", len(factors), half)
	}
	out := make([]float32, half)
	s := h.Scaling
	for i := range out {
		f := math.Pow(h.RopeBase, -float64(2*i)/float64(h.RopeDim))
		switch {
		case factors != nil:
			f /= float64(factors[i])
		case s.Type == "linear":
			f /= s.Factor
		case s.Type == "llama3":
			f = llama3Freq(f, s)
		}
		out[i] = float32(f)
	}
	return out, nil
}

// checkScaling rejects scalings whose frequencies we do not compute, so a
// model is never run silently wrong.
func checkScaling(s RopeScaling, haveFactors bool) error {
	switch s.Type {
	case "", "none":
		return nil
	case "linear", "llama3":
		if haveFactors && s.Type == "llama3" {
			return nil
		}
		if !(s.Factor > 0) {
			return fmt.Errorf("llm: %s rope scaling needs a positive factor, have %g", s.Type, s.Factor)
		}
		if s.Type == "llama3" && (s.OrigCtx <= 0 || !(s.HighFreqFactor > s.LowFreqFactor) || !(s.LowFreqFactor > 0)) {
			return fmt.Errorf("llm: llama3 rope scaling parameters out of range")
		}
		return nil
	}
	return fmt.Errorf("llm: rope scaling %q is not supported", s.Type)
}

// llama3Freq applies Llama 3.1's scaling to one frequency: short
// wavelengths stay, long ones are divided by the factor, and the band in
// between is interpolated smoothly.
func llama3Freq(f float64, s RopeScaling) float64 {
	wavelen := 2 * math.Pi / f
	lowWave := float64(s.OrigCtx) / s.LowFreqFactor
	highWave := float64(s.OrigCtx) / s.HighFreqFactor
	switch {
	case wavelen < highWave:
		return f
	case wavelen > lowWave:
		return f / s.Factor
	}
	smooth := (float64(s.OrigCtx)/wavelen - s.LowFreqFactor) / (s.HighFreqFactor - s.LowFreqFactor)
	return (1-smooth)*f/s.Factor + smooth*f
}
