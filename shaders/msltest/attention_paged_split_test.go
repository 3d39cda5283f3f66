package msltest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	batchengine "github.com/harkapp/hark/engine/batch"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/internal/shared"
	"github.com/harkapp/hark/shaders"
)

// pagedSplitCases: rows of 1 to 5,000 keys beside each other, block sizes
// that put chunk starts mid-block (3, 5, 7, 11), GQA, sliding windows that
// start inside a tile and leave a row's first chunks before its window,
// head sizes from 16 to 200.
var pagedSplitCases = []struct {
	hd, nHead, nKV, bs, ts, window int
	pos                            []int32
}{
	{64, 4, 2, 16, 320, 0, []int32{4999, 0, 130, 2047, 511, 512, 31}},
	{34, 6, 2, 5, 600, 0, []int32{2999, 1, 700, 33, 32}},
	{80, 3, 3, 3, 400, 500, []int32{1199, 64, 31, 499, 500}},
	{16, 4, 1, 7, 200, 37, []int32{1399, 5, 900, 36}},
	{128, 2, 1, 16, 100, 0, []int32{1599, 1000, 255}},
	{200, 2, 2, 11, 50, 300, []int32{549, 300, 17}},
}

// pagedSplitTunings: the cuda family (chunks of about 512 keys), chunks
// of 32 keys (up to 160 a row: the merge past ATTN_TICKET_W partials takes
// attn_combine), 96 and 200 keys with odd SIMD-group counts, an 8-core GPU
// capping the grid, and a host without tickets (no split); then the
// batched value loop with and without the split.
func pagedSplitTunings() []shaders.Tuning {
	cuda := pagedSplitCUDA()
	with := func(name string, f func(t *shaders.Tuning)) shaders.Tuning {
		t := cuda
		t.Family = name
		f(&t)
		return t
	}
	return []shaders.Tuning{
		cuda,
		with("chunk32", func(t *shaders.Tuning) { t.AttnPagedChunk = 32 }),
		with("chunk96-sg3", func(t *shaders.Tuning) { t.AttnPagedChunk, t.AttnPagedSIMDGroups = 96, 3 }),
		with("chunk200-sg1", func(t *shaders.Tuning) { t.AttnPagedChunk, t.AttnPagedSIMDGroups = 200, 1 }),
		with("8-cores", func(t *shaders.Tuning) { t.AttnPagedChunk, t.Cores, t.AttnPagedSplitGroups = 64, 8, 8 }),
		with("no-tickets", func(t *shaders.Tuning) { t.AttnPagedChunk, t.AttnTicket = 32, 1 }),
		// the value loop in batches (Tuning.AttnPagedValues), split and not
		with("values", func(t *shaders.Tuning) { t.AttnPagedValues = shaders.PagedValuesBatched }),
		with("keys", func(t *shaders.Tuning) { t.AttnPagedValues = 1 }),
		with("chunk32-values-sg3", func(t *shaders.Tuning) {
			t.AttnPagedChunk, t.AttnPagedSIMDGroups, t.AttnPagedValues = 32, 3, shaders.PagedValuesBatched
		}),
		with("no-tickets-values", func(t *shaders.Tuning) { t.AttnTicket, t.AttnPagedValues = 1, shaders.PagedValuesBatched }),
	}
}

// pagedSplitCUDA is the cuda family with the split on at the Default
// tuning's chunk (the family ships it off: HARK_CUDA_TUNE=AttnPagedChunk=512
// turns it on).
func pagedSplitCUDA() shaders.Tuning {
	tu := shaders.TuningFor("cuda")
	tu.AttnPagedChunk = shaders.Default.AttnPagedChunk
	return tu
}

// pagedRowChunks is the chunks attention_paged gives row pos of a grid of
// nc chunks a row over tables of maxKeys keys (the kernel's count).
func pagedRowChunks(pos, window, maxKeys, nc int) int {
	first := 0
	if window > 0 && pos+1 > window {
		first = pos + 1 - window
	}
	clen := ((maxKeys+nc-1)/nc + 31) &^ 31
	return (pos + 1 - first&^31 + clen - 1) / clen
}

// attention_paged split over its rows' keys (Tuning.AttnPagedChunk): each
// split row's chunks merged by the last to finish, against the CPU, under
// each tuning; the launch is the split the tuning asks for, and between
// them the cases have rows of one chunk and rows of several.
func TestAttentionPagedSplit(t *testing.T) {
	defer func() { kitTune = nil }()
	splitRows, wholeRows := 0, 0
	for _, tu := range pagedSplitTunings() {
		t.Run(tu.Family, func(t *testing.T) {
			kitTune = &tu
			r := rand.New(rand.NewPCG(38, 20))
			worst := 0.0
			for i, c := range pagedSplitCases {
				d := plan.AttentionPagedArgs{Type: ggml.F16, HeadDim: c.hd, NHead: c.nHead, NKV: c.nKV, M: len(c.pos), Ldq: c.nHead * c.hd,
					Ldo: c.nHead * c.hd, BlockSize: c.bs, TableStride: c.ts, HeadStride: 1, PosStride: c.hd, BlockStride: c.bs * c.hd * c.nKV}.Dispatch()
				ls, err := shaders.LaunchFor(&d, &tu, nil)
				require.NoError(t, err)
				require.Len(t, ls, 1)
				nc := int(ls[0].Groups[0])
				if tu.AttnTicket != shaders.TicketMerge {
					require.Equal(t, 1, nc, "no ticket buffer: no split")
				} else {
					require.Greater(t, nc, 1, "case %d", i)
					require.Equal(t, uint32(c.nHead*len(c.pos)), ls[0].Tickets)
				}
				for _, p := range c.pos {
					if pagedRowChunks(int(p), c.window, c.bs*c.ts, nc) > 1 {
						splitRows++
					} else {
						wholeRows++
					}
				}
				for _, ty := range []ggml.Type{ggml.F32, ggml.F16} {
					worst = max(worst, checkAttentionPaged(t, r, c.hd, c.nHead, c.nKV, c.bs, c.ts, c.window, c.pos, ty, 3+i))
				}
			}
			t.Logf("%s: worst relative error %.3g", tu.Family, worst)
		})
	}
	require.Positive(t, splitRows)
	require.Positive(t, wholeRows)
	t.Logf("rows split %d, rows in one chunk %d", splitRows, wholeRows)
}

// attention_paged_f16_a16 (the K and q rows read 16 bytes a load) on pools
// whose strides keep every row 16-byte aligned, the split's cases of head
// sizes 16, 64 and 128, against the CPU, split and not: the launch rule
// picks the instance, and its sums are attn_dot's.
func TestAttentionPagedAligned(t *testing.T) {
	defer func() { kitTune = nil }()
	whole := shaders.TuningFor("cuda")
	for _, tu := range []shaders.Tuning{pagedSplitCUDA(), whole} {
		kitTune = &tu
		r := rand.New(rand.NewPCG(38, 26))
		n := 0
		for _, c := range pagedSplitCases {
			if c.hd%16 != 0 {
				continue
			}
			n++
			p := newPagedPoolHoles(r, c.hd, c.nKV, c.bs, c.ts, c.pos, 3)
			p.ps = c.hd + 8
			p.hs = c.bs*p.ps + 16
			p.bstride = c.nKV*p.hs + 8
			ldq := c.nHead*c.hd + 4
			d := plan.AttentionPagedArgs{Type: ggml.F16, HeadDim: c.hd, NHead: c.nHead, NKV: c.nKV, M: len(c.pos), Ldq: ldq,
				Ldo: c.nHead*c.hd + 1, BlockSize: c.bs, TableStride: c.ts, HeadStride: p.hs, PosStride: p.ps,
				BlockStride: p.bstride, NBlocks: p.nBlocks}.Dispatch()
			ls, err := shaders.LaunchFor(&d, &tu, nil)
			require.NoError(t, err)
			require.Equal(t, "attention_paged_f16_a16", ls[0].Function)
			worst := checkAttentionPagedPool(t, r, p, c.nHead, c.window, ggml.F16, ldq)
			t.Logf("chunk %d, head size %d, %d rows: worst relative error %.3g", tu.AttnPagedChunk, c.hd, len(c.pos), worst)
		}
		require.Equal(t, 4, n)
	}
}

// The split's grid as the server's steps have it (the SmolLM2 shape: 9
// heads, tables of 8,192 keys, an H200's 132 multiprocessors): 4 to 16
// rows get chunks of 512-608 keys, so a decode row of up to 512 keys
// keeps one threadgroup and a 4,000-key prompt row gets 7-8; 128 rows
// fill the GPU unsplit.
func TestAttentionPagedSplitGrid(t *testing.T) {
	tu := pagedSplitCUDA()
	tu.Cores = 132
	for _, c := range []struct{ m, nc int }{{4, 16}, {8, 16}, {16, 14}, {32, 7}, {128, 1}} {
		d := plan.AttentionPagedArgs{Type: ggml.F16, HeadDim: 64, NHead: 9, NKV: 3, M: c.m, Ldq: 576, Ldo: 576, BlockSize: 16,
			TableStride: 512, HeadStride: 16 * 64, PosStride: 64, BlockStride: 3 * 16 * 64}.Dispatch()
		ls, err := shaders.LaunchFor(&d, &tu, nil)
		require.NoError(t, err)
		require.Equal(t, uint32(c.nc), ls[0].Groups[0], "%d rows", c.m)
		require.Equal(t, 1, pagedRowChunks(300, 0, 8192, c.nc), fmt.Sprint(c.m, " rows: a 300-key row"))
		if c.nc > 1 {
			require.Equal(t, 1, pagedRowChunks(511, 0, 8192, c.nc))
			require.Equal(t, uint32(4*(4+c.m*9*c.nc*66)), ls[0].Scratch)
			require.Equal(t, uint32(9*c.m), ls[0].Tickets)
			require.GreaterOrEqual(t, pagedRowChunks(3999, 0, 8192, c.nc), 4)
		} else {
			require.Zero(t, ls[0].Scratch)
			require.Zero(t, ls[0].Tickets)
		}
	}
}

// The batch engine (engine/batch: the paged KV cache, rows of several
// sequences a step) on the executor under the cuda tuning with chunks of
// 32 keys, so every row past 32 keys is split over threadgroups merged by
// ticket, with the value loop key by key and batched: stories260K's golden
// prompts, run together, each get the golden greedy tokens (as sequential
// decoding does, TestE2EStories).
func TestE2EBatchPagedSplit(t *testing.T) {
	for _, values := range []uint32{1, shaders.PagedValuesBatched} {
		tu := shaders.TuningFor("cuda")
		tu.Family, tu.AttnPagedChunk, tu.AttnPagedValues = fmt.Sprint("cuda-chunk32-values", values), 32, values
		t.Run(tu.Family, func(t *testing.T) { checkBatchGolden(t, TestBackend(t).WithTuning(tu)) })
	}
}

// checkBatchGolden decodes stories260K's golden prompts together through
// the batch engine on be and checks the golden greedy tokens.
func checkBatchGolden(t *testing.T, be *Backend) {
	golden := shared.LoadStoriesGolden(t)
	o, err := llm.OpenFile(shared.Path(t, "models", "stories260K.gguf"), be, llm.Options{Context: 256})
	require.NoError(t, err)
	defer o.Close()
	e, err := batchengine.Load(be, o.File, o.Tk, batchengine.Config{Context: 256, Seqs: 8, TokenBudget: 48, BlockSize: 16, MatMulRows: 17}, nil)
	require.NoError(t, err)
	defer func() { e.Close(); <-e.Done() }()
	deepest := 0
	got := make([]llm.Result, len(golden.Results))
	errs := make([]error, len(golden.Results))
	var wg sync.WaitGroup
	for i, r := range golden.Results {
		deepest = max(deepest, len(r.PromptTokens)+len(r.GeneratedTokens))
		wg.Go(func() {
			got[i], errs[i] = e.Generate(context.Background(), r.PromptTokens, llm.GenerateOptions{MaxTokens: len(r.GeneratedTokens), IgnoreEOS: true}, 0, nil)
		})
	}
	wg.Wait()
	for i, r := range golden.Results {
		require.NoError(t, errs[i], "request %d", i)
		require.Equal(t, r.GeneratedTokens, got[i].Tokens, "request %d (%q)", i, r.Prompt)
	}
	require.Greater(t, deepest, 64, "rows of three chunks and more")
	require.Greater(t, e.Peak(), 1, "sequences decoded together")
	t.Logf("%d requests, peak %d sequences a step, the deepest row %d keys", len(golden.Results), e.Peak(), deepest)
}
