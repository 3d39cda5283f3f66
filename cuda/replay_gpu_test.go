package cuda

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/internal/shared"
)

// gpuWith opens GPU 0 with o or skips the test when this machine has none.
func gpuWith(t *testing.T, o Options) *Backend {
	t.Helper()
	b, err := New(o)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("no GPU: %v (the GPU tests run on a machine with an NVIDIA GPU: bench/cuda/run.sh)", err)
	}
	require.NoError(t, err)
	t.Cleanup(b.Close)
	return b
}

// TestGPUStoriesReplay: stories260K's golden greedy generations are
// token-exact on the GPU with chained steps replayed from CUDA graphs
// (the default), with graphs and no chaining, and kernel by kernel
// (part 1's path); a seeded sampled generation (the sampler kernel in
// the chain) gives the CPU backend's tokens in every mode. With chaining,
// a repeated 200-token generation makes at most one host launch per 32
// generated tokens beyond the prompt's and the first token's, once its
// shapes are recorded.
func TestGPUStoriesReplay(t *testing.T) {
	modes := []struct {
		name string
		o    Options
	}{
		{"graphs+chain", Options{}},
		{"graphs", Options{NoChain: true}},
		{"per-dispatch", Options{NoChain: true, NoGraphs: true}},
	}
	gpuWith(t, Options{}) // skips first where there is no GPU
	raw, err := os.ReadFile(shared.Path(t, "llm-kit", "golden", "stories260K.golden.json"))
	require.NoError(t, err)
	var golden struct {
		Results []struct {
			Prompt          string  `json:"prompt"`
			PromptTokens    []int32 `json:"prompt_tokens"`
			GeneratedTokens []int32 `json:"generated_tokens"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal(raw, &golden))
	require.NotEmpty(t, golden.Results)
	model := shared.Path(t, "models", "stories260K.gguf")
	smp := llm.Sampler{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1.1, Seed: 42}
	generate := func(be plan.Backend, prompt []int32, n int, s *llm.Sampler) llm.Result {
		t.Helper()
		opt := llm.Options{Context: 256}
		gopt := llm.GenerateOptions{MaxTokens: n, IgnoreEOS: true}
		if s != nil {
			opt.Sampler, gopt.Sampler = s, *s
		}
		o, err := llm.OpenFile(model, be, opt)
		require.NoError(t, err)
		defer o.Close()
		res, err := llm.NewGenerator(o.M, o.Tk).Generate(context.Background(), prompt, gopt, nil)
		require.NoError(t, err)
		return res
	}
	ref := cpu.New(cpu.Options{})
	defer ref.Close()
	prompt := golden.Results[0].PromptTokens
	wantSampled := generate(ref, prompt, 48, &smp)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			b := gpuWith(t, m.o)
			for _, r := range golden.Results {
				got := generate(b, r.PromptTokens, len(r.GeneratedTokens), nil)
				require.Equal(t, r.GeneratedTokens, got.Tokens, "prompt %q", r.Prompt)
			}
			got := generate(b, prompt, 48, &smp)
			require.Equal(t, wantSampled.Tokens, got.Tokens, "sampled")
			st := b.Stats()
			t.Logf("%s: %+v", m.name, st)
			if b.opt.PermuteSeed != 0 || !b.dev.d.graphs {
				t.Logf("graphs are off (permuted block order or an old driver): launch counts not checked")
				return
			}
			if m.o.NoGraphs {
				require.Zero(t, st.GraphLaunches)
				return
			}
			require.Zero(t, st.RecordFailures, st.RecordError)
			require.Positive(t, st.GraphLaunches)
			if m.o.NoChain {
				return
			}
			// graphs live with the executable, so one model generates
			// again and again
			o, err := llm.OpenFile(model, b, llm.Options{Context: 256})
			require.NoError(t, err)
			defer o.Close()
			g := llm.NewGenerator(o.M, o.Tk)
			const n = 200
			var first llm.Result
			// a shape is recorded the second time it comes: the third
			// generation replays only
			for i := range 3 {
				o.M.Reset()
				b.ResetStats()
				res, err := g.Generate(context.Background(), prompt, llm.GenerateOptions{MaxTokens: n, IgnoreEOS: true}, nil)
				require.NoError(t, err)
				require.Len(t, res.Tokens, n)
				if i == 0 {
					first = res
				}
				require.Equal(t, first.Tokens, res.Tokens)
				if i < 2 {
					continue
				}
				st := b.Stats()
				t.Logf("repeated %d-token generation: %+v, %.4f host launches per token", n, st, float64(st.HostLaunches())/n)
				require.Zero(t, st.GraphsBuilt, "every shape was recorded by the first generation")
				// the prompt's prefill and the first selection, then the
				// chain: n-1 tokens in batches of 32
				require.LessOrEqual(t, st.HostLaunches(), 2+(n-1+31)/32)
			}
		})
	}
}
