package batch

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/kvpage"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/internal/shared"
)

// storiesRunner is a Runner over stories260K on the CPU: blocks of 16
// positions, a token budget of 48 per step.
type storiesRunner struct {
	*Runner
	pool    *kvpage.Pool
	workers *cpu.Pool // the CPU backend's, for counting its passes
}

const runBlocks = 96

func newStoriesRunner(t *testing.T, seqs int) storiesRunner {
	t.Helper()
	f, err := gguf.Open(shared.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	be := cpu.New(cpu.Options{})
	t.Cleanup(be.Close)
	b, err := llm.LoadBatch(be, f, llm.BatchOptions{Rows: 48, Seqs: seqs, BlockSize: 16, Blocks: runBlocks, Context: 256})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	pool, err := kvpage.New(kvpage.Config{BlockSize: 16, Budget: runBlocks, BlockBytes: 1})
	require.NoError(t, err)
	s, err := New(pool, Options{TokenBudget: 48, MaxSeqs: seqs})
	require.NoError(t, err)
	r, err := NewRunner(s, b, seqs)
	require.NoError(t, err)
	return storiesRunner{r, pool, be.Pool()}
}

// run steps until nothing is pending (each returns in bounded work).
func (r storiesRunner) run(t *testing.T) {
	t.Helper()
	for i := 0; ; i++ {
		require.Less(t, i, 5000, "the runner makes progress")
		more, err := r.Step()
		require.NoError(t, err)
		if !more {
			return
		}
	}
}

// alone generates req's tokens with nothing else running.
func alone(t *testing.T, prompt []int32, n int, sm llm.Sampler) []int32 {
	t.Helper()
	r := newStoriesRunner(t, 1)
	req := &Request{Prompt: prompt, MaxTokens: n}
	require.NoError(t, r.Submit(req, sm))
	r.run(t)
	require.NoError(t, req.Err)
	return req.Generated
}

// Concurrent requests, greedy and sampled, each get what they would
// alone: the golden prompts their 64 golden tokens (llama.cpp's greedy
// continuation), a seeded sampled request its lone run's tokens.
func TestRunnerConcurrentEqualsAlone(t *testing.T) {
	g := shared.LoadStoriesGolden(t)
	r := newStoriesRunner(t, 4)
	sampled := llm.Sampler{Temperature: 0.8, TopK: 40, Seed: 38}
	var reqs []*Request
	for _, gr := range g.Results {
		req := &Request{Prompt: gr.PromptTokens, MaxTokens: len(gr.GeneratedTokens)}
		require.NoError(t, r.Submit(req, llm.Sampler{}))
		reqs = append(reqs, req)
	}
	sreq := &Request{Prompt: g.Results[0].PromptTokens, MaxTokens: 40}
	require.NoError(t, r.Submit(sreq, sampled))
	r.run(t)
	for i, gr := range g.Results {
		require.NoError(t, reqs[i].Err)
		require.Equal(t, gr.GeneratedTokens, reqs[i].Generated, "golden prompt %d", i)
	}
	require.NoError(t, sreq.Err)
	require.Equal(t, alone(t, sreq.Prompt, 40, sampled), sreq.Generated, "the sampled request")
	require.Equal(t, runBlocks, r.pool.Available(), "every block back")
}

// A step and its draws take the CPU pool once (llm.Batch.StepSample
// through plan.Joiner): a step whose draws ran in a pass of their own
// after it, with the host's work between (the engine before round 30,
// whose helpers then parked and were woken twice a token), counts two.
// Counted on the pool, not timed; the tokens are the golden ones and the
// sampled request's lone run's.
func TestRunnerStepIsOnePoolPass(t *testing.T) {
	g := shared.LoadStoriesGolden(t)
	r := newStoriesRunner(t, 2)
	sampled := llm.Sampler{Temperature: 0.7, TopK: 40, TopP: 0.95, Seed: 7}
	greedy := &Request{Prompt: g.Results[0].PromptTokens, MaxTokens: len(g.Results[0].GeneratedTokens)}
	sreq := &Request{Prompt: g.Results[0].PromptTokens, MaxTokens: 40}
	require.NoError(t, r.Submit(greedy, llm.Sampler{}))
	require.NoError(t, r.Submit(sreq, sampled))
	passes := uint64(0)
	for i := 0; ; i++ {
		require.Less(t, i, 5000, "the runner makes progress")
		before := r.workers.Passes()
		more, err := r.Step()
		require.NoError(t, err)
		n := r.workers.Passes() - before
		require.LessOrEqual(t, n, uint64(1), "step %d: the step and its draws in one pool pass", i)
		passes += n
		if !more {
			break
		}
	}
	require.GreaterOrEqual(t, passes, uint64(40), "a pass for every sampled token at least")
	require.NoError(t, greedy.Err)
	require.NoError(t, sreq.Err)
	require.Equal(t, g.Results[0].GeneratedTokens, greedy.Generated)
	require.Equal(t, alone(t, sreq.Prompt, 40, sampled), sreq.Generated)
}

// A cancelled request's blocks go back to the pool at once, and the
// request running beside it still gets its golden tokens.
func TestRunnerCancelFreesBlocks(t *testing.T) {
	g := shared.LoadStoriesGolden(t)
	require.GreaterOrEqual(t, len(g.Results), 2)
	r := newStoriesRunner(t, 2)
	a := &Request{Prompt: g.Results[0].PromptTokens, MaxTokens: len(g.Results[0].GeneratedTokens)}
	b := &Request{Prompt: g.Results[1].PromptTokens, MaxTokens: len(g.Results[1].GeneratedTokens)}
	require.NoError(t, r.Submit(a, llm.Sampler{}))
	require.NoError(t, r.Submit(b, llm.Sampler{}))
	for len(a.Generated) < 20 {
		_, err := r.Step()
		require.NoError(t, err)
	}
	held := a.seq.Table()
	before := r.pool.Available()
	r.Cancel(a)
	require.ErrorIs(t, a.Err, ErrCanceled)
	require.Equal(t, before+len(held), r.pool.Available(), "the cancelled request's %d blocks are free", len(held))
	for _, blk := range held {
		require.Zero(t, r.pool.Refs(blk))
	}
	r.run(t)
	require.NoError(t, b.Err)
	require.Equal(t, g.Results[1].GeneratedTokens, b.Generated)
	require.Equal(t, runBlocks, r.pool.Available())
}

// A request cancelled between a step's Next and its slots (its sampler
// already reaped) takes no sampler slot: on the old code its row took one
// that was never given back, and the next request admitted found none
// ("more running sequences than sampler slots").
func TestRunnerCancelUnderStepKeepsSlots(t *testing.T) {
	g := shared.LoadStoriesGolden(t)
	require.GreaterOrEqual(t, len(g.Results), 2)
	r := newStoriesRunner(t, 2)
	a := &Request{Prompt: g.Results[0].PromptTokens, MaxTokens: 30}
	b := &Request{Prompt: g.Results[1].PromptTokens, MaxTokens: len(g.Results[1].GeneratedTokens)}
	require.NoError(t, r.Submit(a, llm.Sampler{}))
	require.NoError(t, r.Submit(b, llm.Sampler{}))
	for len(a.Generated) < 5 {
		_, err := r.Step()
		require.NoError(t, err)
	}
	r.afterNext = func(st Step) {
		r.afterNext = nil
		require.True(t, slices.ContainsFunc(st.Rows, func(row Row) bool { return row.Req == a }))
		r.Cancel(a)
	}
	_, err := r.Step()
	require.NoError(t, err)
	require.ErrorIs(t, a.Err, ErrCanceled)
	c := &Request{Prompt: g.Results[0].PromptTokens, MaxTokens: len(g.Results[0].GeneratedTokens)}
	require.NoError(t, r.Submit(c, llm.Sampler{}))
	r.run(t)
	require.NoError(t, b.Err)
	require.NoError(t, c.Err)
	require.Equal(t, g.Results[1].GeneratedTokens, b.Generated)
	require.Equal(t, g.Results[0].GeneratedTokens, c.Generated)
	require.Equal(t, runBlocks, r.pool.Available())
}

// Sixteen requests sharing a system prompt: its full blocks are prefilled
// once (the model computes the first request's whole prompt and only the
// others' tails), and what they generate is what they would alone.
func TestRunnerSharedPrefixPrefilledOnce(t *testing.T) {
	r := newStoriesRunner(t, 16)
	system := make([]int32, 100)
	for i := range system {
		system[i] = int32(1 + (i*37)%500)
	}
	var reqs []*Request
	for i := range 16 {
		p := append(append([]int32{}, system...), int32(10+i), int32(200+i), int32(300+i), int32(40+i), int32(50+i))
		req := &Request{Prompt: p, MaxTokens: 3}
		require.NoError(t, r.Submit(req, llm.Sampler{}))
		reqs = append(reqs, req)
	}
	r.run(t)
	full := 100 / 16 * 16 // positions of the shared full blocks
	require.Equal(t, 105+15*(105-full), r.Prefilled())
	for _, req := range reqs {
		require.NoError(t, req.Err)
		require.Len(t, req.Generated, 3)
	}
	for _, i := range []int{0, 15} {
		require.Equal(t, alone(t, reqs[i].Prompt, 3, llm.Sampler{}), reqs[i].Generated, "request %d", i)
	}
}
