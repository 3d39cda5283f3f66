package llm

import (
	"fmt"
	"maps"
	"slices"

	"github.com/harkapp/hark/engine/plan"
)

// DefaultPenaltyLastN is how many prompt tokens the penalties count when
// Sampler.PenaltyLastN is 0 (llama.cpp's window).
const DefaultPenaltyLastN = 64

// Sampler holds the sampling parameters of a generation, with the
// semantics of the plan's Sample kernel (plan.Sample): they are written to
// the backend as step data, so every sampler samples on the backend.
type Sampler struct {
	// Temperature <= 0 picks the most likely token (after penalties).
	Temperature float32
	TopK        int     // 0 = off
	TopP        float32 // 0 or 1 = off
	MinP        float32 // 0 = off
	// RepeatPenalty divides positive logits of seen tokens and multiplies
	// negative ones (0 or 1 = off).
	RepeatPenalty    float32
	PresencePenalty  float32
	FrequencyPenalty float32
	// PenaltyLastN is how many of the context's tokens before the
	// generation (the prompt's tail) the penalties count: 0 means
	// DefaultPenaltyLastN, < 0 the whole context. Every generated token
	// counts.
	PenaltyLastN int
	Seed         uint64
	// LogitBias is added to the logits of the token ids it names before
	// the penalties (OpenAI's logit_bias): at most MaxLogitBias entries,
	// values clamped to [-MaxBias, MaxBias]; -100 in effect bans a token.
	LogitBias map[int32]float32
	// Logprobs reports each generated token's log-probability (see
	// TokenLogprob) and, with TopLogprobs in [1, MaxTopLogprobs], that many
	// of the most likely tokens at its position.
	Logprobs    bool
	TopLogprobs int
}

// Bounds of the sampler's request-sized settings (OpenAI's).
const (
	MaxLogitBias   = 300 // entries of Sampler.LogitBias
	MaxBias        = 100 // |bias| after clamping
	MaxTopLogprobs = 20  // Sampler.TopLogprobs
)

// Check reports settings a generation over a vocabulary of nVocab tokens
// cannot honour: too many or out-of-range logit_bias ids, a TopLogprobs
// outside [0, MaxTopLogprobs], a NaN parameter.
func (s Sampler) Check(nVocab int) error {
	if len(s.LogitBias) > MaxLogitBias {
		return fmt.Errorf("llm: logit_bias has %d entries, at most %d", len(s.LogitBias), MaxLogitBias)
	}
	for id, v := range s.LogitBias {
		if id < 0 || int(id) >= nVocab {
			return fmt.Errorf("llm: logit_bias names token %d, outside the vocabulary of %d", id, nVocab)
		}
		if v != v {
			return fmt.Errorf("llm: logit_bias of token %d is NaN", id)
		}
	}
	if s.TopLogprobs < 0 || s.TopLogprobs > MaxTopLogprobs {
		return fmt.Errorf("llm: top_logprobs %d outside [0, %d]", s.TopLogprobs, MaxTopLogprobs)
	}
	for _, v := range []float32{s.Temperature, s.TopP, s.MinP, s.RepeatPenalty, s.PresencePenalty, s.FrequencyPenalty} {
		if v != v {
			return fmt.Errorf("llm: a sampling parameter is NaN")
		}
	}
	return nil
}

// bias is the clamped logit bias of id (0 when none).
func (s Sampler) bias(id int32) float32 {
	return min(max(s.LogitBias[id], -MaxBias), MaxBias)
}

// Greedy reports whether the sampler is a plain argmax.
func (s Sampler) Greedy() bool {
	return s.Temperature <= 0 && !s.penalties() && len(s.LogitBias) == 0
}

func (s Sampler) penalties() bool {
	return (s.RepeatPenalty != 0 && s.RepeatPenalty != 1) || s.PresencePenalty != 0 || s.FrequencyPenalty != 0
}

func (s Sampler) topP() float32 {
	if s.TopP <= 0 || s.TopP > 1 {
		return 1
	}
	return s.TopP
}

// settings are s as the Sample kernel's step data: logit_bias clamped
// and in id order (the encoding is deterministic), top-p 1 when off.
func (s Sampler) settings() plan.SampleSettings {
	st := plan.SampleSettings{TopK: max(s.TopK, 0), TopP: s.topP(), MinP: s.MinP, Temp: s.Temperature,
		Repeat: s.RepeatPenalty, Presence: s.PresencePenalty, Frequency: s.FrequencyPenalty, Seed: s.Seed,
		Logprobs: s.Logprobs, Top: s.TopLogprobs}
	st.BiasIDs = slices.Sorted(maps.Keys(s.LogitBias))
	for _, id := range st.BiasIDs {
		st.Bias = append(st.Bias, s.bias(id))
	}
	return st
}

// argmax reports that the plan's argmax pass selects exactly what s
// would: no temperature, penalties, bias or logprobs.
func (s Sampler) argmax() bool { return s.Greedy() && !s.Logprobs }

// promptWindow is how many of the n context tokens before a generation
// the penalties count (generated tokens always count).
func (s Sampler) promptWindow(n int) int {
	if !s.penalties() {
		return 0
	}
	w := s.PenaltyLastN
	if w == 0 {
		w = DefaultPenaltyLastN
	}
	if w < 0 || w > n {
		w = n
	}
	return w
}
