package cuda

import (
	"fmt"
	"os"
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
// the GEMMs (llm.BatchOptions.MatMulRows).
//
//	HARK_BENCH_MODEL=F.gguf ./cuda.test -test.run '^$' -test.bench GPUBatchStep -test.benchtime 256x
func BenchmarkGPUBatchStep(b *testing.B) {
	path := os.Getenv("HARK_BENCH_MODEL")
	if path == "" {
		b.Skip("HARK_BENCH_MODEL names no model (hark bench llm writes the SmolLM2-shaped one)")
	}
	be := gpuWith(b, Options{})
	f, err := gguf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	const ctx, block, seqs, prompt, answer = 4096, 16, 16, 128, 128
	gemm, _ := strconv.Atoi(os.Getenv("HARK_BENCH_MATMUL_ROWS"))
	bt, err := llm.LoadBatch(be, f, llm.BatchOptions{Rows: 128, Seqs: seqs, BlockSize: block, Blocks: seqs * ctx / block, Context: ctx,
		MatMulRows: gemm})
	if err != nil {
		b.Fatal(err)
	}
	defer bt.Close()
	tables := make([][]int32, seqs)
	for i := range tables {
		tables[i] = make([]int32, (prompt+answer)/block)
		for j := range tables[i] {
			tables[i][j] = int32(i*ctx/block + j)
		}
		// the prompt's keys, so attention reads what a served stream's does
		pr := make([]llm.Row, prompt)
		for j := range pr {
			pr[j] = llm.Row{Token: int32(1 + (i*131+j*17)%(bt.H.NVocab-1)), Pos: j, Table: tables[i]}
		}
		if err := bt.Step(pr); err != nil {
			b.Fatal(err)
		}
	}
	for _, m := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("rows=%d", m), func(b *testing.B) {
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
			step := func(n int) {
				for i := range rows {
					rows[i].Pos = prompt + n%answer
					ds[i].Step = uint64(n)
				}
				if err := bt.Step(rows); err != nil {
					b.Fatal(err)
				}
				if err := bt.SampleAll(ds, toks); err != nil {
					b.Fatal(err)
				}
				for i := range rows {
					rows[i].Token = toks[i]
				}
			}
			for n := range 3 { // recorded by the second, replayed from the third
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
			b.ReportMetric(float64(m*b.N)/el.Seconds(), "tok/s")
			st := be.Stats()
			b.Logf("rows=%d, %d steps: %d steps run, %d kernel launches, %d graph launches (%d recorded), %d waits (%.1f a step)",
				m, b.N, st.Steps, st.KernelLaunches, st.GraphLaunches, st.GraphsBuilt, st.Syncs, float64(st.Syncs)/float64(b.N))
			var total time.Duration
			prof := be.Profile()
			for _, k := range prof {
				total += time.Duration(k.Seconds * 1e9)
			}
			if len(prof) > 0 {
				b.Logf("rows=%d: %.3f ms of kernels a step", m, total.Seconds()*1e3/float64(b.N))
			}
			for _, k := range prof[:min(len(prof), 12)] {
				b.Logf("  %-32s %7d launches %9.3f ms %5.1f%% %8.2f us/launch", k.Function, k.Launches, k.Seconds*1e3,
					100*k.Seconds/total.Seconds(), k.Seconds*1e6/float64(k.Launches))
			}
		})
	}
}
