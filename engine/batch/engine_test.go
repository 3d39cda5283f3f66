package batch

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/kvpage"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/llm/bench"
	"github.com/harkapp/hark/internal/shared"
)

// storiesEngine opens stories260K on the CPU twice: the single-sequence
// model (the sequential reference, llm.Generator) and an engine.
func storiesEngine(t *testing.T, c Config) (*Engine, *llm.Generator) {
	t.Helper()
	return openEngine(t, shared.Path(t, "models", "stories260K.gguf"), c)
}

func openEngine(t *testing.T, path string, c Config) (*Engine, *llm.Generator) {
	t.Helper()
	return openEngineTurn(t, path, c, nil)
}

// openEngineTurn is openEngine whose engine takes its turns from turn.
func openEngineTurn(t *testing.T, path string, c Config, turn Turn) (*Engine, *llm.Generator) {
	t.Helper()
	be := cpu.New(cpu.Options{Threads: 1})
	t.Cleanup(be.Close)
	o, err := llm.OpenFile(path, be, llm.Options{Context: c.Context, F32Cache: c.F32Cache})
	require.NoError(t, err)
	t.Cleanup(func() { o.Close() })
	e, err := Load(be, o.File, o.Tk, c, turn)
	require.NoError(t, err)
	t.Cleanup(func() { e.Close(); <-e.done })
	return e, llm.NewGenerator(o.M, o.Tk)
}

// sequentialRun is g's answer to prompt alone, from an empty cache.
func sequentialRun(t *testing.T, g *llm.Generator, prompt []int32, o llm.GenerateOptions) llm.Result {
	t.Helper()
	g.M.Reset()
	res, err := g.Generate(context.Background(), prompt, o, nil)
	require.NoError(t, err)
	return res
}

// idle waits (bounded by the step count, not time) for every block of
// e's pool to be free again.
func poolOf(e *Engine) *kvpage.Pool { return e.r.s.pool }

// genCase is one request of the concurrency tests.
type genCase struct {
	prompt []int32
	o      llm.GenerateOptions
}

// runConcurrently runs every case's Generate at once and returns the
// results in order.
func runConcurrently(t *testing.T, e *Engine, cases []genCase) []llm.Result {
	t.Helper()
	res := make([]llm.Result, len(cases))
	errs := make([]error, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Go(func() { res[i], errs[i] = e.Generate(context.Background(), c.prompt, c.o, 0, nil) })
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "request %d", i)
	}
	return res
}

// storiesCases are greedy golden prompts, seeded sampled ones (penalties,
// top-k/top-p) with logprobs, stop strings and stop tokens.
func storiesCases(t *testing.T) []genCase {
	g := shared.LoadStoriesGolden(t)
	require.GreaterOrEqual(t, len(g.Results), 2)
	var cases []genCase
	for _, r := range g.Results {
		cases = append(cases, genCase{r.PromptTokens, llm.GenerateOptions{MaxTokens: len(r.GeneratedTokens), IgnoreEOS: true}})
	}
	p0, p1 := g.Results[0].PromptTokens, g.Results[1].PromptTokens
	cases = append(cases,
		genCase{p0, llm.GenerateOptions{MaxTokens: 60, Sampler: llm.Sampler{Temperature: 0.9, TopK: 40, TopP: 0.95, RepeatPenalty: 1.1,
			PresencePenalty: 0.3, Seed: 38, Logprobs: true, TopLogprobs: 3}}},
		genCase{p1, llm.GenerateOptions{MaxTokens: 80, Sampler: llm.Sampler{Temperature: 0.7, Seed: 7}, Stop: []string{"."}}},
		genCase{p1, llm.GenerateOptions{MaxTokens: 200, Sampler: llm.Sampler{Temperature: 1.0, Seed: 3}}},
	)
	return cases
}

// Concurrent requests, greedy and seeded, get exactly what sequential
// decoding (llm.Generator, one request at a time) gives each: tokens,
// text, stop reason, and the same logprobs records, within a bound that
// depends on the cache. How requests arrive decides how a prompt is cut
// into steps, and a step's row count picks its paths (the GEMMs from 16
// rows, mat-vec and single-query attention below), so some rows differ
// from the sequential prefill's in the last float32 bits. With an f32
// cache that is all (seen up to 5e-6 in logprob over 200 runs); an f16
// cache now and then rounds such a key or value element to the
// neighbouring f16 (2^-11 relative), seen up to 5.6e-4. With PromptBeside
// the prompts admitted beside running streams come in chunks of 5; with
// StepCost (a made-up cost, steep past 8 rows) in chunks that vary with
// the decode rows beside them; with Buckets every step padded to a bucket
// of rows (padding rows on a spare block) after the engine warmed them.
func TestEngineEqualsSequential(t *testing.T) {
	steep := StepCost{{1, 10}, {8, 12}, {9, 30}, {48, 40}}
	for _, c := range []struct {
		name   string
		f32    bool
		beside int
		cost   StepCost
		bound  float64
		bucket []int
	}{{"f16 cache", false, 0, nil, 2e-3, nil}, {"f32 cache", true, 0, nil, 2e-5, nil}, {"f32 cache, 5 prompt tokens beside streams", true, 5, nil, 2e-5, nil},
		{"f32 cache, prompt rows bounded by the step's cost", true, 0, steep, 2e-5, nil},
		{"f32 cache, steps padded to row buckets", true, 0, steep, 2e-5, []int{2, 4, 8, 12, 16, 32, 48}}} {
		t.Run(c.name, func(t *testing.T) {
			e, g := storiesEngine(t, Config{Context: 256, Seqs: 4, TokenBudget: 48, BlockSize: 16, F32Cache: c.f32, PromptBeside: c.beside,
				StepCost: c.cost, BesideCost: 1.8, Buckets: c.bucket})
			cases := storiesCases(t)
			got := runConcurrently(t, e, cases)
			for i, gc := range cases {
				want := sequentialRun(t, g, gc.prompt, gc.o)
				require.Equal(t, want.Tokens, got[i].Tokens, "request %d", i)
				require.Equal(t, want.Text, got[i].Text, "request %d", i)
				require.Equal(t, want.Reason, got[i].Reason, "request %d", i)
				require.Len(t, got[i].Logprobs, len(want.Logprobs), "request %d", i)
				for j := range want.Logprobs {
					require.Equal(t, want.Logprobs[j].Token, got[i].Logprobs[j].Token)
					require.InDelta(t, want.Logprobs[j].Logprob, got[i].Logprobs[j].Logprob, c.bound, "request %d token %d", i, j)
					require.Len(t, got[i].Logprobs[j].Top, len(want.Logprobs[j].Top))
				}
			}
			require.Equal(t, llm.StopString, got[len(cases)-2].Reason, "the stop string ends its request")
			require.Equal(t, poolOf(e).Blocks(), poolOf(e).Available(), "every block back")
		})
	}
}

// A KV budget too small for the requests at once: the engine preempts
// (recomputing later) instead of failing, and every request still gets
// exactly its sequential answer; a request that cannot fit even alone
// fails with a clear error.
func TestEnginePreemption(t *testing.T) {
	bb := kvpage.BlockBytes(5, 4*8, 16, 2) // stories260K: 5 layers, 4 KV heads of 8
	// The engine waits after its first step until every request is queued:
	// however the machine schedules them, they run at once (a fast first
	// request could otherwise finish before the others came, and nothing
	// would be preempted).
	turn := &gateTurn{gate: make(chan struct{})}
	e, g := openEngineTurn(t, shared.Path(t, "models", "stories260K.gguf"),
		Config{Context: 256, Seqs: 4, TokenBudget: 48, BlockSize: 16, KVBytes: 10 * bb}, turn)
	require.Equal(t, 10, poolOf(e).Blocks())
	all := storiesCases(t)
	// two greedy requests and the seeded one with penalties, 80 tokens
	// each: 6 blocks or more apiece, more than 10 at once
	cases := []genCase{all[0], all[1], all[len(all)-3]}
	for i := range cases {
		cases[i].o.MaxTokens = 80
		cases[i].o.Stop = nil
	}
	submitted := make(chan struct{}, len(cases))
	e.onSubmit = func() { submitted <- struct{}{} }
	go func() {
		for range cases {
			<-submitted
		}
		close(turn.gate)
	}()
	got := runConcurrently(t, e, cases)
	for i, c := range cases {
		want := sequentialRun(t, g, c.prompt, c.o)
		require.Equal(t, want.Tokens, got[i].Tokens, "request %d", i)
	}
	require.Greater(t, e.Prefilled(), func() int {
		n := 0
		for _, c := range cases {
			n += len(c.prompt)
		}
		return n
	}(), "preempted sequences were computed again")
	long := make([]int32, 200)
	for i := range long {
		long[i] = int32(1 + i%300)
	}
	_, err := e.Generate(context.Background(), long, llm.GenerateOptions{MaxTokens: 50, IgnoreEOS: true}, 0, nil)
	require.ErrorIs(t, err, kvpage.ErrNoRoom)
	require.Equal(t, 10, poolOf(e).Available())
}

// Cancelling a request (its context, or its consumer ending it) frees
// its blocks at once, and the request beside it still gets its sequential
// answer.
func TestEngineCancel(t *testing.T) {
	e, g := storiesEngine(t, Config{Context: 256, Seqs: 2, TokenBudget: 48, BlockSize: 16})
	cases := storiesCases(t)
	ctx, cancel := context.WithCancel(context.Background())
	var mid int
	o := llm.GenerateOptions{MaxTokens: 200, IgnoreEOS: true, OnToken: func(llm.TokenLogprob) error {
		if mid++; mid == 10 {
			cancel()
		}
		return nil
	}}
	var wg sync.WaitGroup
	var other llm.Result
	var otherErr error
	wg.Go(func() { other, otherErr = e.Generate(context.Background(), cases[1].prompt, cases[1].o, 0, nil) })
	res, err := e.Generate(ctx, cases[0].prompt, o, 0, nil)
	require.NoError(t, err)
	require.Equal(t, llm.StopCanceled, res.Reason)
	require.Len(t, res.Tokens, 10, "it ends at the token that cancelled it")
	wg.Wait()
	require.NoError(t, otherErr)
	require.Equal(t, sequentialRun(t, g, cases[1].prompt, cases[1].o).Tokens, other.Tokens)
	require.Equal(t, poolOf(e).Blocks(), poolOf(e).Available(), "every block back")

	// a consumer's error (the client left) ends its request the same way
	boom := fmt.Errorf("client gone")
	_, err = e.Generate(context.Background(), cases[0].prompt, llm.GenerateOptions{MaxTokens: 100, IgnoreEOS: true},
		0, func(string) error { return boom })
	require.ErrorIs(t, err, boom)
	require.Equal(t, poolOf(e).Blocks(), poolOf(e).Available(), "every block back")
}

// gateTurn holds the engine at its first yield (after its first step)
// until the test opens the gate.
type gateTurn struct {
	once sync.Once
	gate chan struct{}
}

func (g *gateTurn) Take(context.Context) error { return nil }
func (g *gateTurn) Yield(ctx context.Context) error {
	g.once.Do(func() { <-g.gate })
	return nil
}
func (g *gateTurn) Give() {}

// With one running sequence, requests that arrive while it runs are
// admitted by priority, then arrival: a higher-priority request queued
// after a lower one starts first, once the running one is done.
func TestEngineAdmission(t *testing.T) {
	be := cpu.New(cpu.Options{Threads: 1})
	t.Cleanup(be.Close)
	o, err := llm.OpenFile(shared.Path(t, "models", "stories260K.gguf"), be, llm.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { o.Close() })
	turn := &gateTurn{gate: make(chan struct{})}
	e, err := Load(be, o.File, o.Tk, Config{Context: 256, Seqs: 1, TokenBudget: 48}, turn)
	require.NoError(t, err)
	t.Cleanup(func() { e.Close(); <-e.done })
	submitted := make(chan struct{})
	e.onSubmit = func() { submitted <- struct{}{} }
	cases := storiesCases(t)
	// The order is the steps' (a request's first row), not the order in
	// which the requests' goroutines take their first tokens: the engine
	// puts tokens without waiting, so a finished request's goroutine can
	// read its tokens after the next request's (a flake of the first
	// form of this test). Requests are told apart by their max tokens.
	names := map[int]string{20: "running", 21: "low", 22: "high"}
	var mu sync.Mutex
	var order []string
	seen := map[*Request]bool{}
	e.r.afterNext = func(st Step) {
		mu.Lock()
		defer mu.Unlock()
		for _, row := range st.Rows {
			if !seen[row.Req] {
				seen[row.Req] = true
				order = append(order, names[row.Req.MaxTokens])
			}
		}
	}
	started := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	run := func(name string, pri int) {
		n := 0
		for k, v := range names {
			if v == name {
				n = k
			}
		}
		o := llm.GenerateOptions{MaxTokens: n, IgnoreEOS: true, OnToken: func(llm.TokenLogprob) error {
			if name == "running" {
				once.Do(func() { close(started) })
			}
			return nil
		}}
		wg.Go(func() {
			res, err := e.Generate(context.Background(), cases[0].prompt, o, pri, nil)
			require.NoError(t, err)
			require.Len(t, res.Tokens, n)
		})
		<-submitted
	}
	run("running", 0)
	<-started // its first step ran: the engine waits at the gate
	run("low", 0)
	run("high", 1)
	close(turn.gate)
	wg.Wait()
	require.Equal(t, []string{"running", "high", "low"}, order)
}

// Sixteen requests sharing a 1,000-token system prompt, with a context of
// 8,192 (the SmolLM2 tokenizer and context, a small random-weight model
// of its shape family): the shared full blocks are prefilled once,
// counted, and each request computes only its own tail.
func TestEngineSharedPrefixPrefilledOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny-smollm2.gguf")
	shape := bench.Shape{Name: "tiny", Stem: "tiny", Layers: 2, Embd: 64, FF: 128, Heads: 4, KVHeads: 2, Vocab: 49152}
	require.NoError(t, bench.WriteFile(path, shape, ggml.Q8_0, shared.Path(t, "llm-kit", "tokenizers", "smollm2"), 1))
	e, _ := openEngine(t, path, Config{Context: 8192, Seqs: 16, TokenBudget: 256, BlockSize: 16})
	require.Equal(t, 8192, e.Context())
	system := make([]int32, 1000)
	for i := range system {
		system[i] = int32(100 + (i*37)%20000)
	}
	cases := make([]genCase, 16)
	for i := range cases {
		p := append([]int32{}, system...)
		for j := range 8 {
			p = append(p, int32(30000+100*i+j))
		}
		cases[i] = genCase{p, llm.GenerateOptions{MaxTokens: 4, IgnoreEOS: true}}
	}
	got := runConcurrently(t, e, cases)
	for i := range got {
		require.Len(t, got[i].Tokens, 4, "request %d", i)
	}
	full := 1000 / 16 * 16 // the shared full blocks' positions
	require.Equal(t, 1008+15*(1008-full), e.Prefilled())
}

// The q8_0 products of a batch step run the multi-row kernels (several
// streams' rows against each weight block at once, engine/cpu's
// dotQRowsM): concurrent streams still get exactly their sequential
// answers. Prompts and the token budget stay under 16 rows, so every
// step, batched or sequential, takes the row path: the same per-row
// arithmetic, compared exactly.
func TestEngineEqualsSequentialQ8_0(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny-q8_0.gguf")
	// 160 wide and an FFN of 224: odd block counts (5, 7)
	shape := bench.Shape{Name: "tiny", Stem: "tiny", Layers: 2, Embd: 160, FF: 224, Heads: 5, KVHeads: 1, Vocab: 49152}
	require.NoError(t, bench.WriteFile(path, shape, ggml.Q8_0, shared.Path(t, "llm-kit", "tokenizers", "smollm2"), 3))
	e, g := openEngine(t, path, Config{Context: 256, Seqs: 5, TokenBudget: 15, BlockSize: 16})
	var cases []genCase
	for i := range 5 {
		p := make([]int32, 3+2*i)
		for j := range p {
			p[j] = int32(200 + 997*i + 31*j)
		}
		o := llm.GenerateOptions{MaxTokens: 24, IgnoreEOS: true, Sampler: llm.Sampler{Logprobs: true}}
		if i%2 == 1 {
			o.Sampler = llm.Sampler{Temperature: 0.8, TopK: 40, Seed: uint64(10 + i), Logprobs: true}
		}
		cases = append(cases, genCase{p, o})
	}
	got := runConcurrently(t, e, cases)
	for i, c := range cases {
		want := sequentialRun(t, g, c.prompt, c.o)
		require.Equal(t, want.Tokens, got[i].Tokens, "request %d", i)
		require.Len(t, got[i].Logprobs, len(want.Logprobs), "request %d", i)
		for j := range want.Logprobs { // the logits themselves, bit for bit
			require.Equal(t, want.Logprobs[j].Logprob, got[i].Logprobs[j].Logprob, "request %d token %d", i, j)
		}
	}
}

// Config.Trace gets a line a step: two requests' prompts (9 and 20
// tokens, a budget of 8 a step, so they come in chunks) and their decode
// rows add up to what they computed, and the steps follow one another.
func TestEngineTrace(t *testing.T) {
	var buf bytes.Buffer
	e, _ := storiesEngine(t, Config{Context: 64, Seqs: 2, TokenBudget: 8, Trace: &buf})
	cases := []genCase{{make([]int32, 9), llm.GenerateOptions{MaxTokens: 5, IgnoreEOS: true}},
		{make([]int32, 20), llm.GenerateOptions{MaxTokens: 3, IgnoreEOS: true}}}
	for i, c := range cases {
		for j := range c.prompt {
			c.prompt[j] = int32(1 + (7*i+3*j)%200)
		}
	}
	runConcurrently(t, e, cases)
	decode, prompt, deepest := 0, 0, 0
	var last int64
	var lines []string
	submits, recv := 0, 0
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if strings.HasPrefix(l, "submit ") {
			var at int64
			var n, pri, id int
			_, err := fmt.Sscanf(l, "submit %d prompt=%d priority=%d id=%d", &at, &n, &pri, &id)
			require.NoError(t, err, l)
			submits++
			continue
		}
		if strings.HasPrefix(l, "recv ") {
			var id, at int64
			var n int
			_, err := fmt.Sscanf(l, "recv %d %d n=%d", &id, &at, &n)
			require.NoError(t, err, l)
			recv += n
			continue
		}
		lines = append(lines, l)
	}
	require.Equal(t, 2, submits, "a submit line a request")
	require.Equal(t, 5+3, recv, "every token taken by its request")
	for _, l := range lines {
		var start, dur, next, prep, run, sample int64
		var d, p, s, deep int
		_, err := fmt.Sscanf(l, "step %d %d decode=%d prompt=%d seqs=%d deepest=%d next=%d prep=%d run=%d sample=%d",
			&start, &dur, &d, &p, &s, &deep, &next, &prep, &run, &sample)
		require.NoError(t, err, l)
		require.LessOrEqual(t, next+prep+run+sample, dur, "the phases within the step: %s", l)
		require.GreaterOrEqual(t, start, last, "steps in order: %s", l)
		require.LessOrEqual(t, d+p, 8, "within the token budget: %s", l)
		require.LessOrEqual(t, s, 2, l)
		last = start + dur
		decode, prompt, deepest = decode+d, prompt+p, max(deepest, deep)
	}
	require.Equal(t, 9+20, prompt, "the prompts' tokens")
	require.Equal(t, 5-1+3-1, decode, "a decode row for each token after the first")
	require.Equal(t, 20+3-2, deepest, "the longer request's last fed position")
	require.GreaterOrEqual(t, len(lines), 4, "29 prompt tokens at 8 a step")
}
