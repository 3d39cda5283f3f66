package llm

import (
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
}

// Greedy reports whether the sampler is a plain argmax.
func (s Sampler) Greedy() bool {
	return s.Temperature <= 0 && !s.penalties()
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
		return int32(plan.ArgmaxRow(l))
	}
	lmax := float32(math.Inf(-1))
	for i := range l {
		l[i] /= s.Temperature
		lmax = max(lmax, l[i])
	}
	if math.IsInf(float64(lmax), 0) {
		return int32(plan.ArgmaxRow(l))
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
