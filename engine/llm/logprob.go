package llm

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
