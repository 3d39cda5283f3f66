package cuda

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/llm"
)

// BenchmarkGPUBatchStep is issue #38's batched step on the GPU without the
// server: the batch plan of $HARK_BENCH_MODEL (the SmolLM2-shaped q8_0 file
// `hark bench llm` writes) loaded as `hark serve --batch-gpu` loads it
// (context 4096, 128 rows, 16 sampler slots, blocks of 16), then 1, 4 and
// 16 sequences (their 128-token prompts computed first) stepping together as engine/batch's Runner steps them: one
// Step over a row per sequence, then SampleAll of every row at temperature
// 0.7. Each sequence starts at position 128 (a 128-token prompt) and
// advances one position a step, back to 128 after 256 (the bench's
// 128+128). ms/step is a whole step, tok/s the rows it draws; with
// $HARK_CUDA_PROFILE=1 (graphs off) the GPU time of each kernel is logged,
// and the step's kernel time beside it tells host time from GPU time.
// $HARK_BENCH_MATMUL_ROWS=17 runs 16 rows on the mat-vec path instead of
// the GEMMs (llm.BatchOptions.MatMulRows); $HARK_BATCH_FUSE=1 fuses the
// mat-vec step's norms and activation into its products
// (llm.BatchOptions.FuseRows).
//
//	HARK_BENCH_MODEL=F.gguf ./cuda.test -test.run '^$' -test.bench GPUBatchStep -test.benchtime 256x
func BenchmarkGPUBatchStep(b *testing.B) {
	const ctx, prompt, answer = 4096, 128, 128
	be, bt := benchBatch(b, ctx)
	tables := make([][]int32, benchSeqs)
	for i := range tables {
		tables[i] = benchTable(i, ctx, prompt+answer)
		benchPrefill(b, bt, i, tables[i], 0, prompt) // the prompt's keys, so attention reads what a served stream's does
	}
	for _, m := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("rows=%d", m), func(b *testing.B) {
			benchSteps(b, be, m, benchStreams(b, bt, tables[:m], prompt, answer, nil))
		})
	}
}

const benchSeqs, benchBlock = 16, 16

// benchBatch loads $HARK_BENCH_MODEL's batch plan as `hark serve
// --batch-gpu` loads it (ctx positions a sequence, 128 rows, 16 sampler
// slots, blocks of 16).
func benchBatch(b *testing.B, ctx int) (*Backend, *llm.Batch) {
	path := os.Getenv("HARK_BENCH_MODEL")
	if path == "" {
		b.Skip("HARK_BENCH_MODEL names no model (hark bench llm writes the SmolLM2-shaped one)")
	}
	be := gpuWith(b, Options{})
	f, err := gguf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	gemm, _ := strconv.Atoi(os.Getenv("HARK_BENCH_MATMUL_ROWS"))
	fuse := os.Getenv("HARK_BATCH_FUSE") == "1" // (engine/runtime's batchFuseRows: off on cuda)
	bt, err := llm.LoadBatch(be, f, llm.BatchOptions{Rows: 128, Seqs: benchSeqs, BlockSize: benchBlock,
		Blocks: benchSeqs * ctx / benchBlock, Context: ctx, MatMulRows: gemm, FuseRows: fuse})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bt.Close() })
	return be, bt
}

// benchTable is sequence i's table for n positions: its own run of blocks.
func benchTable(i, ctx, n int) []int32 {
	t := make([]int32, (n+benchBlock-1)/benchBlock)
	for j := range t {
		t[j] = int32(i*ctx/benchBlock + j)
	}
	return t
}

// benchTokens is sequence i's tokens at positions from..to-1.
func benchTokens(bt *llm.Batch, i int, table []int32, from, to int) []llm.Row {
	rows := make([]llm.Row, to-from)
	for j := range rows {
		p := from + j
		rows[j] = llm.Row{Token: int32(1 + (i*131+p*17)%(bt.H.NVocab-1)), Pos: p, Table: table}
	}
	return rows
}

// benchPrefill computes sequence i's positions from..to-1, 128 a step.
func benchPrefill(b *testing.B, bt *llm.Batch, i int, table []int32, from, to int) {
	for p := from; p < to; p += 128 {
		if err := bt.Step(benchTokens(bt, i, table, p, min(to, p+128))); err != nil {
			b.Fatal(err)
		}
	}
}

// benchStreams returns step n of len(tables) streams decoding together
// (each at position prompt + n%answer, drawing at temperature 0.7), the
// rows extra returns for step n computed beside them (nil: none).
func benchStreams(b *testing.B, bt *llm.Batch, tables [][]int32, prompt, answer int, extra func(n int) []llm.Row) func(n int) {
	m := len(tables)
	rows := make([]llm.Row, m)
	ds := make([]llm.Draw, m)
	for i := range rows {
		rows[i] = llm.Row{Token: int32((100 + 37*i) % bt.H.NVocab), Table: tables[i]}
		ds[i] = llm.Draw{Slot: i, Row: i}
		if err := bt.SetSampler(i, llm.Sampler{Temperature: 0.7, Seed: uint64(i + 1)}, []int32{1}); err != nil {
			b.Fatal(err)
		}
	}
	toks := make([]int32, m)
	return func(n int) {
		for i := range rows {
			rows[i].Pos = prompt + n%answer
			ds[i].Step = uint64(n)
		}
		step := rows
		if extra != nil {
			step = append(slices.Clone(rows), extra(n)...)
		}
		if err := bt.Step(step); err != nil {
			b.Fatal(err)
		}
		if err := bt.SampleAll(ds, toks); err != nil {
			b.Fatal(err)
		}
		for i := range rows {
			rows[i].Token = toks[i]
		}
	}
}

// benchSteps times b.N steps (after three: the graph recorded by the
// second, replayed from the third), each drawing draws tokens, and logs the backend's counts and, with
// $HARK_CUDA_PROFILE=1, its kernels.
func benchSteps(b *testing.B, be *Backend, draws int, step func(n int)) {
	for n := range 3 {
		step(n)
	}
	be.ResetStats()
	b.ResetTimer()
	t0 := time.Now()
	for n := range b.N {
		step(n)
	}
	el := time.Since(t0)
	b.StopTimer()
	b.ReportMetric(float64(el.Microseconds())/1e3/float64(b.N), "ms/step")
	b.ReportMetric(float64(draws*b.N)/el.Seconds(), "tok/s")
	st := be.Stats()
	b.Logf("%s, %d steps: %d steps run, %d kernel launches, %d graph launches (%d recorded), %d waits (%.1f a step)",
		b.Name(), b.N, st.Steps, st.KernelLaunches, st.GraphLaunches, st.GraphsBuilt, st.Syncs, float64(st.Syncs)/float64(b.N))
	var total time.Duration
	prof := be.Profile()
	for _, k := range prof {
		total += time.Duration(k.Seconds * 1e9)
	}
	if len(prof) > 0 {
		b.Logf("%s: %.3f ms of kernels a step", b.Name(), total.Seconds()*1e3/float64(b.N))
	}
	for _, k := range prof[:min(len(prof), 12)] {
		b.Logf("  %-32s %7d launches %9.3f ms %5.1f%% %8.2f us/launch", k.Function, k.Launches, k.Seconds*1e3,
			100*k.Seconds/total.Seconds(), k.Seconds*1e6/float64(k.Launches))
	}
}

// BenchmarkGPUPromptBeside is issue #38's long prompt beside running
// streams without the server: 4 streams decoding (as BenchmarkGPUBatchStep,
// context 8192 as `hark serve --ctx 8192`) and, in the same step, c rows of
// a 4,000-token prompt's last chunk (positions 3968 onwards: the most keys a
// chunk of it reads), for c = 0 (the streams alone) up to 124 (the whole
// default budget). The step's cost against c is what batch.Config's
// PromptBeside is chosen from (engine/runtime's batchPromptBeside).
func BenchmarkGPUPromptBeside(b *testing.B) {
	const ctx, prompt, answer, long, at, streams = 8192, 128, 128, 4096, 3968, 4
	be, bt := benchBatch(b, ctx)
	tables := make([][]int32, streams)
	for i := range tables {
		tables[i] = benchTable(i, ctx, prompt+answer)
		benchPrefill(b, bt, i, tables[i], 0, prompt)
	}
	lt := benchTable(streams, ctx, long)
	benchPrefill(b, bt, streams, lt, 0, at)
	for _, c := range []int{0, 4, 12, 28, 60, 124} {
		b.Run(fmt.Sprintf("prompt=%d", c), func(b *testing.B) {
			var extra func(int) []llm.Row
			if c > 0 {
				chunk := benchTokens(bt, streams, lt, at, at+c)
				extra = func(int) []llm.Row { return chunk }
			}
			benchSteps(b, be, streams, benchStreams(b, bt, tables, prompt, answer, extra))
		})
	}
}

// BenchmarkGPUStepRows is the cost of a batch step against its rows, what
// engine/runtime's batchStepCost (batch.Config.StepCost) is measured from:
// for m rows, up to 12 streams decoding as BenchmarkGPUBatchStep's (at
// 128-255 keys) and the rest a shallow prompt chunk beside them (a 16th
// sequence's positions 0 to m-13, recomputed each step), as a 128-token
// prompt admitted beside running streams. $HARK_BENCH_MATMUL_ROWS=65 runs
// steps of up to 64 rows on the mat-vec path, as the runtime's CUDA plan.
func BenchmarkGPUStepRows(b *testing.B) {
	const ctx, prompt, answer, streams = 4096, 128, 128, 12
	be, bt := benchBatch(b, ctx)
	tables := make([][]int32, streams)
	for i := range tables {
		tables[i] = benchTable(i, ctx, prompt+answer)
		benchPrefill(b, bt, i, tables[i], 0, prompt)
	}
	pt := benchTable(benchSeqs-1, ctx, prompt)
	for _, m := range []int{1, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64, 65, 96, 128} {
		b.Run(fmt.Sprintf("rows=%d", m), func(b *testing.B) {
			d := min(m, streams)
			var extra func(int) []llm.Row
			if m > d {
				chunk := benchTokens(bt, benchSeqs-1, pt, 0, m-d)
				extra = func(int) []llm.Row { return chunk }
			}
			benchSteps(b, be, d, benchStreams(b, bt, tables[:d], prompt, answer, extra))
		})
	}
}
