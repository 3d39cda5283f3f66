package cuda

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/internal/shared"
)

// gpuWith opens GPU 0 with o or skips the test when this machine has none.
func gpuWith(t testing.TB, o Options) *Backend {
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
// the chain) gives the CPU backend's tokens in every mode. One model
// generates every prompt three times, so the comparisons run on
// recorded graphs (a shape is recorded the second time it comes). Then a
// repeated 200-token generation makes at most one host launch per 64
// chained tokens beyond the prompt's and the first token's.
func TestGPUStoriesReplay(t *testing.T) {
	gpuWith(t, Options{}) // skips first where there is no GPU
	modes := []struct {
		name string
		o    Options
	}{
		{"graphs+chain", Options{}},
		{"graphs", Options{NoChain: true}},
		{"per-dispatch", Options{NoChain: true, NoGraphs: true}},
		{"graphs+chain, no PDL", Options{NoPDL: true}},
	}
	golden := shared.LoadStoriesGolden(t)
	model := shared.Path(t, "models", "stories260K.gguf")
	smp := llm.Sampler{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1.1, Seed: 42}
	open := func(be plan.Backend, s *llm.Sampler) (*llm.Generator, func()) {
		t.Helper()
		o, err := llm.OpenFile(model, be, llm.Options{Context: 256})
		require.NoError(t, err)
		return llm.NewGenerator(o.M, o.Tk), func() { o.Close() }
	}
	generate := func(g *llm.Generator, prompt []int32, n int, s *llm.Sampler) llm.Result {
		t.Helper()
		gopt := llm.GenerateOptions{MaxTokens: n, IgnoreEOS: true}
		if s != nil {
			gopt.Sampler = *s
		}
		g.M.Reset()
		res, err := g.Generate(context.Background(), prompt, gopt, nil)
		require.NoError(t, err)
		return res
	}
	ref := cpu.New(cpu.Options{})
	defer ref.Close()
	prompt := golden.Results[0].PromptTokens
	rg, closeRef := open(ref, &smp)
	wantSampled := generate(rg, prompt, 48, &smp)
	closeRef()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			b := gpuWith(t, m.o)
			g, closeG := open(b, nil)
			defer closeG()
			gs, closeS := open(b, &smp)
			defer closeS()
			for round := range 3 {
				for _, r := range golden.Results {
					got := generate(g, r.PromptTokens, len(r.GeneratedTokens), nil)
					require.Equal(t, r.GeneratedTokens, got.Tokens, "round %d, prompt %q", round, r.Prompt)
				}
				got := generate(gs, prompt, 48, &smp)
				require.Equal(t, wantSampled.Tokens, got.Tokens, "round %d, sampled", round)
			}
			st := b.Stats()
			t.Logf("%s: %s, %+v", m.name, b.Info(), st)
			// with programmatic dependent launch (a 9.0 GPU, its cubins
			// made for it or its PTX compiled here), kernels overlap the
			// kernel before them: the tokens above are unchanged
			if b.Info().PDL && b.pdlOn() {
				require.Positive(t, st.Overlapped, "PDL")
			} else {
				require.Zero(t, st.Overlapped, "no PDL")
			}
			if b.opt.PermuteSeed != 0 || !b.dev.d.graphs {
				t.Logf("graphs are off (permuted block order or an old driver): launch counts not checked")
				return
			}
			if b.opt.NoGraphs { // this mode's, or $HARK_CUDA_GRAPHS=0's for every mode
				require.Zero(t, st.GraphLaunches)
				return
			}
			require.Zero(t, st.RecordFailures, st.RecordError)
			require.Positive(t, st.GraphLaunches)
			if b.opt.NoChain {
				return
			}
			const n = 200
			var first llm.Result
			for i := range 3 {
				b.ResetStats()
				res := generate(g, prompt, n, nil)
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
				require.Zero(t, st.GraphsBuilt, "every shape was recorded by the earlier generations")
				// the prompt's prefill and the first selection, then the
				// chain: n-1 tokens in batches of 64
				require.LessOrEqual(t, st.HostLaunches(), 2+(n-1+63)/64)
			}
		})
	}
}
