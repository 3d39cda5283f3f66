package bench

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/harkapp/hark/engine/llm"
)

// Result is one test's speeds, one per repetition.
type Result struct {
	Test   string    // "pp512", "tg128"
	Tokens int       // tokens per repetition
	TokS   []float64 // tokens per second of each repetition
}

// Mean and standard deviation of the repetitions' tok/s, as llama-bench
// prints them.
func (r Result) Mean() float64 { m, _ := MeanStddev(r.TokS); return m }

// Stddev is the sample standard deviation (0 for one repetition).
func (r Result) Stddev() float64 { _, s := MeanStddev(r.TokS); return s }

// MeanStddev is v's mean and sample standard deviation (0 for one value).
func MeanStddev(v []float64) (mean, stddev float64) {
	if len(v) == 0 {
		return 0, 0
	}
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, 0
	}
	for _, x := range v {
		stddev += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(stddev / float64(len(v)-1))
}

// Prompt measures prompt processing: each repetition empties the context
// and prefills n tokens in one batch (the model's batch must be >= n, as
// llama-bench's default n_batch/n_ubatch of 2048/512 are for pp512). One
// unmeasured warm-up run comes first.
func Prompt(m *llm.Model, n, reps int) (Result, error) { return PromptAt(m, n, 0, reps) }

// PromptAt is Prompt after depth cached tokens (llama-bench -d): the depth
// is prefilled once, unmeasured, and each repetition truncates the context
// back to it before its prefill.
func PromptAt(m *llm.Model, n, depth, reps int) (Result, error) {
	r := Result{Test: testName("pp", n, depth), Tokens: n}
	if err := fill(m, "pp", n, depth); err != nil {
		return r, err
	}
	toks := randomTokens(n, m.H.NVocab)
	for i := -1; i < reps; i++ {
		if err := m.Truncate(depth); err != nil {
			return r, err
		}
		t0 := time.Now()
		if _, err := m.Prefill(toks); err != nil {
			return r, err
		}
		if i >= 0 {
			r.TokS = append(r.TokS, float64(n)/time.Since(t0).Seconds())
		}
	}
	return r, nil
}

// Generate measures text generation: each repetition empties the context
// and decodes n tokens one at a time (each step computes the logits of its
// token, as generation does). One short warm-up run comes first; measure,
// if set, is called after it.
func Generate(m *llm.Model, n, reps int, measure func()) (Result, error) {
	return GenerateAt(m, n, 0, reps, measure)
}

// GenerateAt is Generate after depth cached tokens (llama-bench -d): the
// depth is prefilled once, unmeasured, and each repetition truncates the
// context back to it before its decodes, so every measured step attends
// over depth and more keys.
func GenerateAt(m *llm.Model, n, depth, reps int, measure func()) (Result, error) {
	r := Result{Test: testName("tg", n, depth), Tokens: n}
	if err := fill(m, "tg", n, depth); err != nil {
		return r, err
	}
	toks := randomTokens(n, m.H.NVocab)
	for i := -1; i < reps; i++ {
		if err := m.Truncate(depth); err != nil {
			return r, err
		}
		steps := n
		if i < 0 {
			steps = min(n, 4)
		}
		if i == 0 && measure != nil {
			measure()
		}
		t0 := time.Now()
		for _, t := range toks[:steps] {
			if _, err := m.Decode(t); err != nil {
				return r, err
			}
		}
		if i >= 0 {
			r.TokS = append(r.TokS, float64(n)/time.Since(t0).Seconds())
		}
	}
	return r, nil
}

// testName is llama-bench's: "tg128", "tg128 @ d4096".
func testName(kind string, n, depth int) string {
	if depth > 0 {
		return fmt.Sprintf("%s%d @ d%d", kind, n, depth)
	}
	return fmt.Sprintf("%s%d", kind, n)
}

// fill empties the context and prefills depth tokens (other ids than the
// measured ones), after checking that depth+n fit.
func fill(m *llm.Model, kind string, n, depth int) error {
	if depth < 0 {
		return fmt.Errorf("bench: negative depth %d", depth)
	}
	if depth+n > m.Context() {
		return fmt.Errorf("bench: %s needs a context of %d, the model has %d", testName(kind, n, depth), depth+n, m.Context())
	}
	m.Reset()
	if depth == 0 {
		return nil
	}
	toks := randomTokens(depth+n, m.H.NVocab)[n:]
	_, err := m.Prefill(toks)
	return err
}

// GenerateChained measures generation as Hark generates text: each next
// token chosen on the backend (argmax when smp is greedy, else the Sample
// pass with smp, as a chat request's) and, where the backend chains steps
// (plan.Chainer: a GPU), many decode+select steps per call with only the
// token ids read back. Each repetition empties the context, feeds one
// token (after depth cached ones, untimed: a chat's prompt) and generates n
// more (EOS ignored). The warm-up is a whole repetition, so a GPU records
// its graphs before the measured ones; measure, if set, is called after
// it.
func GenerateChained(g *llm.Generator, n, depth, reps int, smp llm.Sampler, measure func()) (Result, error) {
	r := Result{Test: fmt.Sprintf("tg%d chained", n), Tokens: n}
	if !smp.Greedy() {
		r.Test += fmt.Sprintf(" temp %g", smp.Temperature)
	}
	if depth > 0 {
		r.Test += fmt.Sprintf(" @ d%d", depth)
	}
	m := g.M
	if depth+n+1 > m.Context() {
		return r, fmt.Errorf("bench: chained tg%d needs a context of %d, the model has %d", n, depth+n+1, m.Context())
	}
	prompt := randomTokens(1, m.H.NVocab)
	for i := -1; i < reps; i++ {
		if err := fill(m, "tg", n+1, depth); err != nil {
			return r, err
		}
		if i == 0 && measure != nil {
			measure()
		}
		t0 := time.Now()
		res, err := g.Generate(context.Background(), prompt, llm.GenerateOptions{Sampler: smp, MaxTokens: n, IgnoreEOS: true}, nil)
		if err != nil {
			return r, err
		}
		if len(res.Tokens) != n {
			return r, fmt.Errorf("bench: chained tg%d generated %d tokens (%s)", n, len(res.Tokens), res.Reason)
		}
		if i >= 0 {
			r.TokS = append(r.TokS, float64(n)/time.Since(t0).Seconds())
		}
	}
	return r, nil
}

// randomTokens are fixed pseudo-random ids (llama-bench feeds random
// tokens too; their values do not change the work).
func randomTokens(n, vocab int) []int32 {
	out := make([]int32, n)
	x := uint32(2463534242)
	for i := range out {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		out[i] = int32(x % uint32(vocab))
	}
	return out
}
