package llm

import (
	"context"
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// refLogprobs is a float64 log-softmax of logits, sorted by descending
// probability (ties to the lower id).
func refLogprobs(logits []float32) (lp []float64, order []int) {
	lmax := math.Inf(-1)
	for _, v := range logits {
		lmax = max(lmax, float64(v))
	}
	var z float64
	for _, v := range logits {
		z += math.Exp(float64(v) - lmax)
	}
	lp = make([]float64, len(logits))
	order = make([]int, len(logits))
	for i, v := range logits {
		lp[i] = float64(v) - lmax - math.Log(z)
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return lp[order[a]] > lp[order[b]] })
	return lp, order
}

// TestLogprobs: each generated token comes with its log-softmax at
// temperature 1 and the top alternatives, as a float64 reference computes
// them from the same position's logits, through Result and OnToken.
func TestLogprobs(t *testing.T) {
	g, _ := storiesGenerator(t, Options{})
	ref, _ := storiesGenerator(t, Options{})
	prompt := g.PromptTokens("Lily wanted to play", true)
	var seen []TokenLogprob
	smp := Sampler{Temperature: 0.9, TopK: 40, Seed: 5, Logprobs: true, TopLogprobs: 5}
	res, err := g.Generate(context.Background(), prompt, GenerateOptions{Sampler: smp, MaxTokens: 12,
		OnToken: func(lp TokenLogprob) error { seen = append(seen, lp); return nil }}, nil)
	require.NoError(t, err)
	require.Len(t, res.Logprobs, len(res.Tokens))
	require.Equal(t, res.Logprobs, seen)
	logits, err := ref.M.Prefill(prompt)
	require.NoError(t, err)
	for i, lp := range res.Logprobs {
		require.Equal(t, res.Tokens[i], lp.Token)
		want, order := refLogprobs(logits)
		require.InDelta(t, want[lp.Token], lp.Logprob, 1e-4, "token %d", i)
		require.Len(t, lp.Top, 5)
		for j, tl := range lp.Top {
			require.Equal(t, int32(order[j]), tl.Token, "token %d top %d", i, j)
			require.InDelta(t, want[order[j]], tl.Logprob, 1e-4)
		}
		logits, err = ref.M.Decode(lp.Token)
		require.NoError(t, err)
	}
	// Without Logprobs, OnToken still sees every token, and Result has no
	// log-probabilities.
	g.M.Reset()
	seen = nil
	smp.Logprobs = false
	res2, err := g.Generate(context.Background(), prompt, GenerateOptions{Sampler: smp, MaxTokens: 12,
		OnToken: func(lp TokenLogprob) error { seen = append(seen, lp); return nil }}, nil)
	require.NoError(t, err)
	require.Equal(t, res.Tokens, res2.Tokens, "logprobs do not change the draw")
	require.Nil(t, res2.Logprobs)
	require.Len(t, seen, len(res2.Tokens))
	for i, lp := range seen {
		require.Equal(t, res2.Tokens[i], lp.Token)
		require.Nil(t, lp.Top)
	}
}

// TestLogitBias: a bias of -100 bans the greedy choice, +100 forces a
// token; bad settings are refused before anything is fed.
func TestLogitBias(t *testing.T) {
	g, _ := storiesGenerator(t, Options{})
	prompt := g.PromptTokens("Lily wanted to play", true)
	run := func(s Sampler) (Result, error) {
		g.M.Reset()
		return g.Generate(context.Background(), prompt, GenerateOptions{Sampler: s, MaxTokens: 6, IgnoreEOS: true}, nil)
	}
	plain, err := run(Sampler{})
	require.NoError(t, err)
	banned, err := run(Sampler{LogitBias: map[int32]float32{plain.Tokens[0]: -100}})
	require.NoError(t, err)
	require.NotEqual(t, plain.Tokens[0], banned.Tokens[0])
	require.NotContains(t, banned.Tokens, plain.Tokens[0])
	forced, err := run(Sampler{Temperature: 0.8, Seed: 3, LogitBias: map[int32]float32{300: 1000}}) // clamped to 100
	require.NoError(t, err)
	require.Equal(t, []int32{300, 300, 300, 300, 300, 300}, forced.Tokens)

	big := map[int32]float32{}
	for i := range MaxLogitBias + 1 {
		big[int32(i)] = 1
	}
	for _, s := range []Sampler{
		{LogitBias: big},
		{LogitBias: map[int32]float32{int32(g.M.H.NVocab): 1}},
		{LogitBias: map[int32]float32{-1: 1}},
		{Logprobs: true, TopLogprobs: MaxTopLogprobs + 1},
		{TopLogprobs: -1},
		{Temperature: float32(math.NaN())},
	} {
		_, err := run(s)
		require.Error(t, err)
		require.Zero(t, g.M.Pos(), "nothing fed")
	}
}
