package cuda

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	batchengine "github.com/harkapp/hark/engine/batch"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/internal/shared"
)

// TestGPUBatchEqualsSequential: continuous batching (engine/batch: the
// paged KV cache, rows of several sequences in one step, each request's
// sampler in its slot) on the GPU. Concurrent requests, stories260K's
// golden prompts greedy and seeded sampled ones with penalties, each get
// the golden tokens, and the sampled ones the tokens a sequential
// generation on the same GPU draws. Run in the normal, permuted and
// poisoned modes by bench/cuda's scripts ($HARK_CUDA_PERMUTE,
// $HARK_CUDA_POISON).
func TestGPUBatchEqualsSequential(t *testing.T) {
	b := gpuWith(t, Options{})
	batchEqualsSequential(t, b, nil, nil)
	require.Zero(t, b.Stats().DeepSplits, "no row deeper than a split chunk (512 keys)")
}

// TestGPUBatchBuckets is TestGPUBatchEqualsSequential with every step's
// rows padded to a bucket (batch.Config.Buckets, engine/runtime's CUDA
// buckets to the test's 48-row budget; the padding rows on the pool's
// spare block) and the engine's shapes warmed at its load
// (llm.Batch.Warm): the same tokens, greedy and sampled, so the padding
// changes no real row; and where graphs are on, the two rounds of 17
// requests joining and leaving record no graph: every step and draw
// count replays one recorded at load.
func TestGPUBatchBuckets(t *testing.T) {
	b := gpuWith(t, Options{})
	var graphs [2]int
	batchEqualsSequential(t, b, func(c *batchengine.Config) {
		c.Buckets = []int{2, 4, 8, 12, 16, 24, 32, 40, 48}
	}, &graphs)
	t.Logf("graphs recorded: %d by the warm-up, %d after the rounds", graphs[0], graphs[1])
	require.Equal(t, graphs[0], graphs[1], "no graph recorded while requests ran")
	if b.dev.d.graphs && !b.opt.NoGraphs && b.opt.PermuteSeed == 0 && !b.opt.Profile {
		require.GreaterOrEqual(t, graphs[0], 1+9+16, "the one-row step, 9 buckets and 1-16 draws warmed")
	}
}

// TestGPUBatchStepCost is TestGPUBatchEqualsSequential with steps of up to
// 48 rows on the mat-vec path (MatMulRows 65, as engine/runtime's CUDA
// plan) and prompts admitted beside running streams in the chunks a
// step-cost model allows (a made-up cost, steep past 24 rows, BesideCost
// 1.8: chunks of 1 to 23 rows that vary with the streams beside them): the
// same tokens, greedy and sampled.
func TestGPUBatchStepCost(t *testing.T) {
	b := gpuWith(t, Options{})
	batchEqualsSequential(t, b, func(c *batchengine.Config) {
		c.MatMulRows = 65
		cost, err := batchengine.ParseStepCost("1:1,24:1.5,25:4,48:4.5")
		require.NoError(t, err)
		c.StepCost, c.BesideCost = cost, 1.8
	}, nil)
}

// TestGPUBatchDeepSplit is TestGPUBatchEqualsSequential with the steps
// whose deepest row reads more than 32 keys launching their paged
// attention split over its keys in chunks of 32 (Options.DeepSplitKeys;
// 512 as shipped, past stories260K's prompts and answers): the same
// tokens, greedy and sampled, and the split taken.
func TestGPUBatchDeepSplit(t *testing.T) {
	b := gpuWith(t, Options{DeepSplitKeys: 32})
	batchEqualsSequential(t, b, nil, nil)
	require.Positive(t, b.Stats().DeepSplits, "steps with rows past 32 keys split")
}

// batchEqualsSequential: graphs, when set, gets the backend's graphs
// recorded before the batched rounds (the engine loaded and warmed, the
// sequential references generated) and after them.
func batchEqualsSequential(t *testing.T, b *Backend, set func(*batchengine.Config), graphs *[2]int) {
	golden := shared.LoadStoriesGolden(t)
	o, err := llm.OpenFile(shared.Path(t, "models", "stories260K.gguf"), b, llm.Options{Context: 256})
	require.NoError(t, err)
	defer o.Close()
	// 16 sequences on the mat-vec path, as the runtime steps them on CUDA
	// (engine/runtime's batchMatMulRows: GEMMs from 17 rows).
	c := batchengine.Config{Context: 256, Seqs: 16, TokenBudget: 48, BlockSize: 16, MatMulRows: 17}
	if set != nil {
		set(&c)
	}
	e, err := batchengine.Load(b, o.File, o.Tk, c, nil)
	require.NoError(t, err)
	defer func() { e.Close(); <-e.Done() }()

	type req struct {
		prompt []int32
		o      llm.GenerateOptions
		want   []int32 // nil: the sequential generation's
	}
	var reqs []req
	for range 3 { // 15 greedy requests and the two sampled: more than 16 sequences
		for _, r := range golden.Results {
			reqs = append(reqs, req{r.PromptTokens, llm.GenerateOptions{MaxTokens: len(r.GeneratedTokens), IgnoreEOS: true}, r.GeneratedTokens})
		}
	}
	p0, p1 := golden.Results[0].PromptTokens, golden.Results[1].PromptTokens
	reqs = append(reqs,
		req{o: llm.GenerateOptions{MaxTokens: 60, IgnoreEOS: true, Sampler: llm.Sampler{Temperature: 0.9, TopK: 40, TopP: 0.95,
			RepeatPenalty: 1.1, PresencePenalty: 0.3, Seed: 38}}, prompt: p0},
		req{o: llm.GenerateOptions{MaxTokens: 80, IgnoreEOS: true, Sampler: llm.Sampler{Temperature: 0.7, Seed: 7}}, prompt: p1},
	)
	g := llm.NewGenerator(o.M, o.Tk)
	for i := range reqs {
		if reqs[i].want == nil {
			g.M.Reset()
			res, err := g.Generate(context.Background(), reqs[i].prompt, reqs[i].o, nil)
			require.NoError(t, err)
			reqs[i].want = res.Tokens
		}
	}
	if graphs != nil {
		graphs[0] = b.Stats().GraphsBuilt
	}
	for round := range 2 { // the second on recorded graphs, where shapes repeat
		got := make([]llm.Result, len(reqs))
		errs := make([]error, len(reqs))
		var wg sync.WaitGroup
		for i, r := range reqs {
			wg.Go(func() { got[i], errs[i] = e.Generate(context.Background(), r.prompt, r.o, 0, nil) })
		}
		wg.Wait()
		for i, r := range reqs {
			require.NoError(t, errs[i], "round %d, request %d", round, i)
			require.Equal(t, r.want, got[i].Tokens, "round %d, request %d", round, i)
		}
	}
	// The prompts are 1-19 tokens and the generations 60-80, so every
	// sequence is admitted long before the first ends: steps of 16 rows.
	require.Equal(t, 16, e.Peak(), "16 requests decoded together")
	if graphs != nil {
		graphs[1] = b.Stats().GraphsBuilt
	}
	t.Logf("peak %d sequences a step; %+v", e.Peak(), b.Stats())
}
