package llm

import "math"

// TokenLogprob is one generated token with, when Sampler.Logprobs is set,
// its log-probability under the model: the log-softmax of the logits over
// the whole vocabulary at temperature 1, before logit_bias, penalties and
// the cuts (OpenAI's definition: the model's distribution, not the
// sampler's).
type TokenLogprob struct {
	Token   int32
	Logprob float32
	// Top are the Sampler.TopLogprobs most likely tokens at this position,
	// most likely first (ties to the lower id).
	Top []TopLogprob
}

// TopLogprob is one of the most likely tokens at a position.
type TopLogprob struct {
	Token   int32
	Logprob float32
}

// logprobsOf fills lp's Logprob and Top from the logits of its position.
// NaN logits count as -Inf.
func logprobsOf(lp *TokenLogprob, logits []float32, top int) {
	lmax := math.Inf(-1)
	for _, v := range logits {
		if float64(v) > lmax {
			lmax = float64(v)
		}
	}
	var z float64
	for _, v := range logits {
		if v == v {
			z += math.Exp(float64(v) - lmax)
		}
	}
	lse := lmax + math.Log(z)
	of := func(id int32) float32 {
		v := logits[id]
		if v != v {
			return float32(math.Inf(-1))
		}
		return float32(float64(v) - lse)
	}
	lp.Logprob = of(lp.Token)
	lp.Top = nil
	if top <= 0 {
		return
	}
	lp.Top = make([]TopLogprob, 0, top)
	for i := range logits {
		id := int32(i)
		if len(lp.Top) == top && !better(of(id), id, lp.Top[top-1]) {
			continue
		}
		if len(lp.Top) < top {
			lp.Top = append(lp.Top, TopLogprob{})
		}
		j := len(lp.Top) - 1
		for j > 0 && better(of(id), id, lp.Top[j-1]) {
			lp.Top[j] = lp.Top[j-1]
			j--
		}
		lp.Top[j] = TopLogprob{Token: id, Logprob: of(id)}
	}
}

// better reports that (v, id) ranks before t: a higher logprob, ties to
// the lower id.
func better(v float32, id int32, t TopLogprob) bool {
	return v > t.Logprob || (v == t.Logprob && id < t.Token)
}
