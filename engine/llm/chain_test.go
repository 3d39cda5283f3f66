package llm

import (
	"context"
	"testing"

	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/engine/tokenizer"
	"github.com/stretchr/testify/require"
)

// chunked runs a CPU executable's chains chunk steps at a time, as a GPU
// does, so a stop inside a chunk leaves selected tokens to discard.
type chunked struct {
	plan.Executable
	chunk int
}

func (c chunked) RunPasses(passes []int, vars []plan.Vars, _ int, done func(int) bool) (int, error) {
	return c.Executable.(plan.Chainer).RunPasses(passes, vars, c.chunk, done)
}

// unchained hides the CPU executable's Chainer: one step per call.
type unchained struct{ plan.Executable }

type wrapBackend struct {
	plan.Backend
	wrap func(plan.Executable) plan.Executable
}

func (w wrapBackend) Load(p *plan.Plan) (plan.Executable, error) {
	e, err := w.Backend.Load(p)
	if err != nil {
		return nil, err
	}
	return w.wrap(e), nil
}

// TestChainedDecodeMatchesSteps: chained decoding (chunks of 1 and 7
// tokens) gives the tokens, text and stop reasons of one-step decoding, for
// greedy and on-backend sampling, stopping at stop strings, EOS-like limits
// and the context end, and the model continues correctly afterwards.
func TestChainedDecodeMatchesSteps(t *testing.T) {
	f := openStories(t)
	tk, err := tokenizer.FromGGUFFile(f)
	require.NoError(t, err)
	smp := Sampler{Temperature: 0.8, TopK: 30, TopP: 0.9, RepeatPenalty: 1.1, Seed: 7}
	gen := func(wrap func(plan.Executable) plan.Executable) *Generator {
		m, err := Load(wrapBackend{newCPU(t), wrap}, f, Options{Context: 96})
		require.NoError(t, err)
		t.Cleanup(func() { m.Close() })
		return NewGenerator(m, tk)
	}
	ref := gen(func(e plan.Executable) plan.Executable { return unchained{e} })
	_, refChains := ref.M.exec.(plan.Chainer)
	require.False(t, refChains)
	variants := map[string]*Generator{
		"chunk 1": gen(func(e plan.Executable) plan.Executable { return e }),
		"chunk 7": gen(func(e plan.Executable) plan.Executable { return chunked{e, 14} }),
	}
	cases := []GenerateOptions{
		{MaxTokens: 40},
		{MaxTokens: 40, Sampler: smp},
		{MaxTokens: 40, Sampler: Sampler{Temperature: 0.9, TopK: 50, FrequencyPenalty: 0.5, Seed: 3, Logprobs: true, TopLogprobs: 3,
			LogitBias: map[int32]float32{13: -100, 400: 2}}},
		{MaxTokens: 64, Stop: []string{"named Li"}},
		{MaxTokens: 200}, // runs into the 96-token context
	}
	prompt := ref.PromptTokens("Once upon a time", true)
	for ci, o := range cases {
		ref.M.Reset()
		want, wantErr := ref.Generate(context.Background(), prompt, o, nil)
		wantNext, _ := ref.Generate(context.Background(), nil, GenerateOptions{MaxTokens: 5}, nil)
		for name, g := range variants {
			g.M.Reset()
			got, err := g.Generate(context.Background(), prompt, o, nil)
			require.Equal(t, wantErr, err, "case %d %s", ci, name)
			require.Equal(t, want.Tokens, got.Tokens, "case %d %s", ci, name)
			require.Equal(t, want.Text, got.Text, "case %d %s", ci, name)
			require.Equal(t, want.Reason, got.Reason, "case %d %s", ci, name)
			require.Equal(t, want.Logprobs, got.Logprobs, "case %d %s", ci, name)
			next, _ := g.Generate(context.Background(), nil, GenerateOptions{MaxTokens: 5}, nil)
			require.Equal(t, wantNext.Tokens, next.Tokens, "case %d %s: continuing after the chain", ci, name)
			require.Equal(t, ref.M.Tokens(), g.M.Tokens(), "case %d %s: the context", ci, name)
		}
	}
}
