package llm

import (
	"fmt"
	"math"
	"slices"

	"github.com/harkapp/hark/engine/plan"
)

// DefaultPenaltyLastN is how many recent tokens the penalties look at when
// Sampler.PenaltyLastN is 0 (llama.cpp's default).
const DefaultPenaltyLastN = 64

// Sampler holds the sampling parameters, with the semantics of the plan's
// Sample kernel (plan.SampleArgs).
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
	// PenaltyLastN is the window of recent tokens (prompt included) the
	// penalties look at: 0 means DefaultPenaltyLastN, < 0 the whole context.
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

// same reports that s and o sample identically.
func (s Sampler) same(o Sampler) bool {
	if len(s.LogitBias) != len(o.LogitBias) {
		return false
	}
	for id := range s.LogitBias {
		if v, ok := o.LogitBias[id]; !ok || s.bias(id) != o.bias(id) || v != v {
			return false
		}
	}
	return s.kernelArgs() == o.kernelArgs() && s.PenaltyLastN == o.PenaltyLastN &&
		s.Logprobs == o.Logprobs && s.TopLogprobs == o.TopLogprobs
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

// window is the number of history tokens the penalties see when kvLen
// tokens are in the context.
func (s Sampler) window(kvLen int) int {
	if !s.penalties() {
		return 0
	}
	n := s.PenaltyLastN
	if n == 0 {
		n = DefaultPenaltyLastN
	}
	if n < 0 || n > kvLen {
		n = kvLen
	}
	return n
}

// kernelArgs fills the Sample kernel's record except its bindings and N;
// HistLen and Step are patched per step.
func (s Sampler) kernelArgs() plan.SampleArgs {
	return plan.SampleArgs{TopK: max(s.TopK, 0), TopP: s.topP(), MinP: s.MinP, Temp: s.Temperature,
		Repeat: s.RepeatPenalty, Seed: s.Seed, Presence: s.PresencePenalty, Frequency: s.FrequencyPenalty}
}

// hostSampler runs the Sample kernel's algorithm on the host, for a
// generation whose parameters differ from those the model's plan was built
// with. It keeps its working memory between calls.
type hostSampler struct {
	l     []float32
	ids   []int32
	count map[int32]int
}

// sample draws one token from logits; hist are the tokens the penalties
// see, step the draw counter.
func (h *hostSampler) sample(s Sampler, logits []float32, hist []int32, step uint64) int32 {
	n := len(logits)
	h.l = append(h.l[:0], logits...)
	l := h.l
	for i, v := range l {
		if v != v {
			l[i] = float32(math.Inf(-1))
		}
	}
	for id := range s.LogitBias {
		l[id] += s.bias(id)
	}
	if len(hist) > 0 && s.penalties() {
		if h.count == nil {
			h.count = map[int32]int{}
		}
		clear(h.count)
		for _, id := range hist {
			if id >= 0 && int(id) < n {
				h.count[id]++
			}
		}
		rep := s.RepeatPenalty
		for id, c := range h.count {
			v := l[id]
			if rep != 0 && rep != 1 {
				if v > 0 {
					v /= rep
				} else {
					v *= rep
				}
			}
			l[id] = v - (s.PresencePenalty + float32(c)*s.FrequencyPenalty)
		}
	}
	if s.Temperature <= 0 || s.Temperature != s.Temperature {
		return argmax(l)
	}
	lmax := float32(math.Inf(-1))
	for i := range l {
		l[i] /= s.Temperature
		lmax = max(lmax, l[i])
	}
	if math.IsInf(float64(lmax), 0) {
		return argmax(l)
	}
	h.ids = h.ids[:0]
	for i := range n {
		h.ids = append(h.ids, int32(i))
	}
	ids := h.ids
	slices.SortFunc(ids, func(a, b int32) int {
		switch {
		case l[a] > l[b]:
			return -1
		case l[a] < l[b]:
			return 1
		}
		return int(a - b)
	})
	if s.TopK > 0 && s.TopK < n {
		ids = ids[:s.TopK]
	}
	var z float64
	for _, id := range ids {
		z += math.Exp(float64(l[id] - lmax))
	}
	topP := s.topP()
	keep := len(ids)
	var cum float64
	for i, id := range ids {
		ev := math.Exp(float64(l[id] - lmax))
		if s.MinP > 0 && i > 0 && ev < float64(s.MinP) {
			keep = i
			break
		}
		cum += ev
		if topP < 1 && cum >= float64(topP)*z {
			keep = i + 1
			break
		}
	}
	ids = ids[:keep]
	var mass float64
	for _, id := range ids {
		mass += math.Exp(float64(l[id] - lmax))
	}
	target := float64(plan.Uniform(s.Seed, step)) * mass
	cum = 0
	for _, id := range ids {
		cum += math.Exp(float64(l[id] - lmax))
		if cum > target {
			return id
		}
	}
	return ids[len(ids)-1]
}

// argmax returns the index of the largest value, the lowest on ties.
func argmax(x []float32) int32 {
	best := -1
	var bv float32
	for i, v := range x {
		if v != v {
			continue
		}
		if best < 0 || v > bv {
			best, bv = i, v
		}
	}
	return int32(max(best, 0))
}
