package llm

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// batchReq is one generation of the batched-decode tests: it arrives at
// step start, prefills its prompt in chunks, then decodes n tokens.
type batchReq struct {
	prompt  []int32
	sampler Sampler
	n       int
	start   int
}

// sequential generates r alone on the single-sequence plan, as Generator
// does: the argmax pass for greedy settings, else the Sample pass with
// the draw counter i.
func sequential(t *testing.T, m *Model, r batchReq) []int32 {
	t.Helper()
	m.Reset()
	require.NoError(t, m.feed(r.prompt))
	sample := !r.sampler.argmax()
	if sample {
		require.NoError(t, m.setSampler(r.sampler))
	}
	var out []int32
	for i := range r.n {
		if i > 0 {
			require.NoError(t, m.stepNext())
		}
		tok, err := m.selectNext(sample, uint64(i))
		require.NoError(t, err)
		out = append(out, tok)
	}
	return out
}

// runBatched drives b like a continuous-batching scheduler: each step
// admits the requests whose start has come, gives every prefilling
// sequence a chunk of at most chunk prompt tokens and every decoding one
// its last token, in one Step; then each sequence whose rows reached the
// end of its context so far draws its next token from its last row.
// Blocks are handed out in an interleaved order, so sequences' blocks are
// not contiguous.
func runBatched(t *testing.T, b *Batch, reqs []batchReq, chunk int) [][]int32 {
	t.Helper()
	type seq struct {
		toks   []int32 // prompt, then generated
		fed    int
		table  []int32
		out    []int32
		active bool
	}
	seqs := make([]*seq, len(reqs))
	nextBlock := int32(0)
	grow := func(s *seq, upto int) {
		for len(s.table)*b.pg.blockSize <= upto {
			s.table = append(s.table, nextBlock)
			nextBlock++
			require.Less(t, int(nextBlock), b.opt.Blocks+1, "pool exhausted")
		}
	}
	for step := 0; ; step++ {
		var rows []Row
		type last struct{ slot, row int }
		var ends []last
		busy := false
		for i, r := range reqs {
			s := seqs[i]
			if s == nil {
				if step < r.start {
					busy = true
					continue
				}
				s = &seq{toks: append([]int32(nil), r.prompt...), active: true}
				seqs[i] = s
				require.NoError(t, b.SetSampler(i, r.sampler, r.prompt))
			}
			if !s.active {
				continue
			}
			busy = true
			n := min(chunk, len(s.toks)-s.fed)
			for j := range n {
				p := s.fed + j
				grow(s, p)
				rows = append(rows, Row{Token: s.toks[p], Pos: p, Table: s.table})
			}
			s.fed += n
			if s.fed == len(s.toks) {
				ends = append(ends, last{i, len(rows) - 1})
			}
		}
		if !busy {
			break
		}
		if len(rows) == 0 {
			continue
		}
		require.NoError(t, b.Step(rows))
		// every sequence's draw of the step at once (SampleAll), as the
		// batch engine's Runner draws them
		ds := make([]Draw, len(ends))
		for k, e := range ends {
			ds[k] = Draw{Slot: e.slot, Row: e.row, Step: uint64(len(seqs[e.slot].out))}
		}
		toks := make([]int32, len(ds))
		require.NoError(t, b.SampleAll(ds, toks))
		for k, e := range ends {
			s, r := seqs[e.slot], reqs[e.slot]
			s.out = append(s.out, toks[k])
			s.toks = append(s.toks, toks[k])
			if len(s.out) == r.n {
				s.active = false
			}
		}
	}
	out := make([][]int32, len(reqs))
	for i, s := range seqs {
		out[i] = s.out
	}
	return out
}

// TestBatchMatchesSequential: stories260K's golden greedy tokens, and a
// seeded sampled generation, come out of the M-sequence step exactly as
// from sequential decoding, for 1, 2 and 4 sequences that start at
// different steps with different prompt lengths, prefilled in chunks
// interleaved with the others' decoding; with 16 rows or more the step
// takes the GEMM pass.
func TestBatchMatchesSequential(t *testing.T) {
	g, _ := loadGolden(t)
	f := openStories(t)
	be := newCPU(t)
	m, err := Load(be, f, Options{})
	require.NoError(t, err)
	defer m.Close()
	sampled := Sampler{Temperature: 0.9, TopK: 40, TopP: 0.95, RepeatPenalty: 1.1, Seed: 38}
	var reqs []batchReq
	for i, r := range g.Results {
		reqs = append(reqs, batchReq{prompt: r.PromptTokens, n: len(r.GeneratedTokens), start: 3 * i})
		// the golden tokens are llama.cpp's; the sequential plan reproduces
		// them (TestGoldenStories)
		require.Equal(t, r.GeneratedTokens, sequential(t, m, reqs[i]), "golden prompt %d, sequential", i)
	}
	require.GreaterOrEqual(t, len(reqs), 2)
	// a sampled request, and a long prompt that prefills past 16 rows
	long := append(append([]int32(nil), reqs[0].prompt...), reqs[1].prompt...)
	long = append(long, long...)
	reqs = append(reqs, batchReq{prompt: reqs[1].prompt, sampler: sampled, n: 48, start: 1},
		batchReq{prompt: long, sampler: Sampler{Temperature: 0.7, Seed: 7}, n: 30, start: 5})
	want := make([][]int32, len(reqs))
	for i, r := range reqs {
		want[i] = sequential(t, m, r)
	}
	for _, fuse := range []bool{false, true} {
		// FuseRows: the mat-vec step's norms and activation in its products
		b, err := LoadBatch(be, f, BatchOptions{Rows: 40, Seqs: 4, BlockSize: 16, Blocks: 64, Context: 256, FuseRows: fuse})
		require.NoError(t, err)
		defer b.Close()
		batchMatchesSequential(t, b, reqs, want, fuse)
	}
}

func batchMatchesSequential(t *testing.T, b *Batch, reqs []batchReq, want [][]int32, fuse bool) {
	for _, n := range []int{1, 2, 4} {
		for _, chunk := range []int{5, 32} {
			t.Run(fmt.Sprintf("fuse%v_seqs%d_chunk%d", fuse, n, chunk), func(t *testing.T) {
				// the n requests: golden greedy ones and sampled ones
				pick := []int{0, len(reqs) - 2, 1, len(reqs) - 1}[:n]
				var rs []batchReq
				for _, i := range pick {
					rs = append(rs, reqs[i])
				}
				got := runBatched(t, b, rs, chunk)
				for j, i := range pick {
					require.Equal(t, want[i], got[j], "request %d of %d (chunk %d)", i, n, chunk)
				}
			})
		}
	}
}

// TestBatchStepErrors: rows the pool or the context cannot hold are
// refused before anything runs.
func TestBatchStepErrors(t *testing.T) {
	f := openStories(t)
	b, err := LoadBatch(newCPU(t), f, BatchOptions{Rows: 4, Seqs: 2, BlockSize: 8, Blocks: 4, Context: 32})
	require.NoError(t, err)
	defer b.Close()
	for _, c := range []struct {
		rows []Row
		msg  string
	}{
		{nil, "1 to 4"},
		{make([]Row, 5), "1 to 4"},
		{[]Row{{Token: -1, Table: []int32{0}}}, "outside the vocabulary"},
		{[]Row{{Token: 1, Pos: 32, Table: []int32{0, 1, 2, 3}}}, "context"},
		{[]Row{{Token: 1, Pos: 9, Table: []int32{0}}}, "needs 2"},
		{[]Row{{Token: 1, Pos: 0, Table: []int32{4}}}, "outside the pool"},
	} {
		require.ErrorContains(t, b.Step(c.rows), c.msg)
	}
	_, err = b.Sample(2, 0, 0, 0, nil)
	require.ErrorContains(t, err, "slot 2")
	two := make([]int32, 2)
	require.ErrorContains(t, b.SampleAll([]Draw{{Slot: 0}, {Slot: 0, Row: 1}}, two), "two draws in sampler slot 0")
	require.ErrorContains(t, b.SampleAll([]Draw{{Slot: 1, Row: 4}}, two), "row 4 outside the batch of 4")
	require.ErrorContains(t, b.SampleAll([]Draw{{Slot: 0}, {Slot: 1}}, two[:1]), "2 draws into 1 tokens")
}

// TestBatchOneRowStepIsDecode: a one-row batch step runs single-sequence
// decode's dispatches, the cache's kernels paged (RoPE with the KV write,
// then attention, where decode has them in one dispatch): norms fused into the
// products after them and the gated activation into the down product,
// where the multi-row step keeps them as dispatches of their own. Only the
// logits differ: every batch row keeps its own, so their norm stays apart.
func TestBatchOneRowStepIsDecode(t *testing.T) {
	f := openStories(t)
	a, h, err := readModel(f)
	require.NoError(t, err)
	single, _, err := buildPlan(a, h, f, 256, 32, ggml.F16)
	require.NoError(t, err)
	batch, _, _, _, err := buildBatchPlan(a, h, f, BatchOptions{Rows: 40, Seqs: 4, BlockSize: 16, Blocks: 64, Context: 256}, ggml.F16)
	require.NoError(t, err)
	kernels := func(ps *plan.Pass) []plan.Kernel {
		var k []plan.Kernel
		for _, d := range ps.Ops {
			k = append(k, d.Kernel)
		}
		return k
	}
	var want []plan.Kernel
	for _, k := range kernels(single.Passes[1]) { // decode
		if k == plan.RopeAttention { // over a paged cache, the pair
			want = append(want, plan.RopeKVPaged, plan.AttentionPaged)
			continue
		}
		if k == plan.RopeAttentionMatVec { // the pair, then the output product
			want = append(want, plan.RopeKVPaged, plan.AttentionPaged, plan.MatVec)
			continue
		}
		want = append(want, k)
	}
	require.Equal(t, plan.RMSNormMatVec, want[len(want)-1], "decode's logits")
	want = append(want[:len(want)-1], plan.RMSNorm, plan.MatVec)
	require.Equal(t, "step.one", batch.Passes[BatchPassOne].Name)
	require.Equal(t, want, kernels(batch.Passes[BatchPassOne]))
	require.Greater(t, len(batch.Passes[BatchPassMatVec].Ops), len(want), "the multi-row step's norms and activations")

	// FuseRows: the mat-vec step runs the one-row step's dispatches over
	// its m rows (M patched from the step's rows), the logits' norm fused
	// too: a norm a sublayer, the gated activation a layer and the final
	// norm fewer; the GEMM step keeps them apart
	fused, _, _, _, err := buildBatchPlan(a, h, f, BatchOptions{Rows: 40, Seqs: 4, BlockSize: 16, Blocks: 64, Context: 256, FuseRows: true}, ggml.F16)
	require.NoError(t, err)
	wantFused := append(slices.Clone(want[:len(want)-2]), plan.RMSNormMatVec)
	require.Equal(t, wantFused, kernels(fused.Passes[BatchPassMatVec]))
	require.Equal(t, len(batch.Passes[BatchPassMatVec].Ops)-3*h.NLayer-1, len(fused.Passes[BatchPassMatVec].Ops))
	require.Equal(t, kernels(batch.Passes[BatchPassMatMul]), kernels(fused.Passes[BatchPassMatMul]))
	require.Equal(t, kernels(batch.Passes[BatchPassOne]), kernels(fused.Passes[BatchPassOne]))
	for _, d := range fused.Passes[BatchPassMatVec].Ops {
		switch d.Kernel {
		case plan.RMSNormMatVec, plan.SiLUMulMatVec, plan.MatVec:
			a := plan.DecodeProduct(&d)
			require.Equal(t, 40, a.M, "%s over the plan's rows", d.Kernel)
			require.True(t, slices.ContainsFunc(d.Patch[:d.NPatch], func(p plan.Patch) bool {
				return p.Target == plan.PatchProductM && p.Var == plan.VarNTok
			}), "%s: its rows patched from the step's", d.Kernel)
		}
	}
}

// shapeRecorder is an executable that records the shape of every pass it
// runs (the pass and its rows or draws, VarNTok): what a backend that
// records a launch sequence per shape (cuda's graphs) keys them by.
type shapeRecorder struct {
	plan.Executable
	runs []batchShape
}

type batchShape struct{ pass, n int }

func (r *shapeRecorder) Run(pass int, vars *plan.Vars) error {
	r.runs = append(r.runs, batchShape{pass, int(vars[plan.VarNTok])})
	return r.Executable.Run(pass, vars)
}

// TestBatchBucketsWarm: with BatchOptions.Buckets, Warm runs every step
// and draw shape a run meets, twice each (a graph is recorded on a
// shape's second run), before any sequence; then a run where 4 sequences
// join at different steps, with prompts in chunks of 5 beside the others'
// decoding (steps of 1 to 9 rows), meets no shape Warm did not run, where
// the same run without buckets (as before Buckets) meets 13 (9 row counts
// and 1 to 4 draws), each a graph recorded on the streams' path on CUDA;
// and the padding rows
// change no real row: the tokens are sequential decoding's, greedy
// (stories260K's golden) and sampled.
func TestBatchBucketsWarm(t *testing.T) {
	g, _ := loadGolden(t)
	f := openStories(t)
	be := newCPU(t)
	m, err := Load(be, f, Options{})
	require.NoError(t, err)
	defer m.Close()
	var reqs []batchReq
	for i, r := range g.Results[:2] {
		reqs = append(reqs, batchReq{prompt: r.PromptTokens, n: len(r.GeneratedTokens), start: 3 * i})
	}
	long := append(append([]int32(nil), reqs[0].prompt...), reqs[1].prompt...)
	reqs = append(reqs, batchReq{prompt: reqs[1].prompt, sampler: Sampler{Temperature: 0.9, TopK: 40, TopP: 0.95, RepeatPenalty: 1.1, Seed: 38}, n: 48, start: 1},
		batchReq{prompt: long, sampler: Sampler{Temperature: 0.7, Seed: 7}, n: 30, start: 5})
	want := make([][]int32, len(reqs))
	for i, r := range reqs {
		want[i] = sequential(t, m, r)
	}
	require.Equal(t, g.Results[0].GeneratedTokens, want[0], "golden")

	buckets := []int{2, 4, 8, 16, 24, 40}
	shapes := map[bool]map[batchShape]int{}
	for _, bucketed := range []bool{false, true} {
		o := BatchOptions{Rows: 40, Seqs: 4, BlockSize: 16, Blocks: 64, Context: 256}
		if bucketed {
			o.Buckets = buckets
		}
		b, err := LoadBatch(be, f, o)
		require.NoError(t, err)
		defer b.Close()
		rec := &shapeRecorder{Executable: b.exec}
		b.exec = rec
		require.NoError(t, b.Warm())
		warm := map[batchShape]int{}
		for _, s := range rec.runs {
			warm[s]++
		}
		rec.runs = nil
		got := runBatched(t, b, reqs, 5)
		for i := range reqs {
			require.Equal(t, want[i], got[i], "bucketed %v, request %d", bucketed, i)
		}
		fresh := map[batchShape]int{}
		for _, s := range rec.runs {
			if warm[s] == 0 {
				fresh[s]++
			}
		}
		shapes[bucketed] = fresh
		if !bucketed {
			require.Empty(t, warm, "Warm is a no-op without buckets")
			continue
		}
		// the one-row step, each bucket's, and 1 to 4 draws: twice each
		require.Len(t, warm, 1+len(buckets)+4)
		for s, n := range warm {
			require.Equal(t, 2, n, "%+v", s)
		}
		require.Contains(t, warm, batchShape{BatchPassOne, 1})
		require.Contains(t, warm, batchShape{BatchPassMatMul, 40})
		require.Contains(t, warm, batchShape{BatchPassSample, 4})
	}
	require.Empty(t, shapes[true], "a bucketed run meets only warmed shapes")
	require.Len(t, shapes[false], 13, "unbucketed, the joins' row counts are shapes of their own: %v", shapes[false])
}

// TestBucketRows: a step's rows padded to the smallest bucket that holds
// them; one row, rows past the last bucket and no buckets unpadded.
func TestBucketRows(t *testing.T) {
	b := []int{2, 4, 16, 24}
	for _, c := range [][2]int{{1, 1}, {2, 2}, {3, 4}, {4, 4}, {5, 16}, {16, 16}, {17, 24}, {24, 24}, {25, 25}} {
		require.Equal(t, c[1], BucketRows(b, c[0]), "%d rows", c[0])
	}
	require.Equal(t, 7, BucketRows(nil, 7))
	_, err := LoadBatch(newCPU(t), openStories(t), BatchOptions{Rows: 8, Seqs: 2, BlockSize: 8, Blocks: 4, Context: 32, Buckets: []int{4, 16}})
	require.ErrorContains(t, err, "from 2 to 8")
}
