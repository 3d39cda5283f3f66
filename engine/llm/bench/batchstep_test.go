package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/internal/shared"
)

// BenchmarkBatchStep is issue 38's CPU measure at the kernel level: one
// decode step of the batch plan (engine/batch's Engine) on the
// SmolLM2-135M-shaped q8_0 file, with 1, 2, 4 and 8 rows, each row a
// sequence of its own at position 128, on one worker and on two. Besides
// wall time it reports the process's CPU time a step and a row
// (cpu-ms/step, cpu-ms/row). On one worker that is the arithmetic alone;
// with two it includes the pool's spinning, which grows with the
// machine's load (a shared machine: compare runs of one load only).
//
// HARK_BENCH_MODEL names an existing file (hark bench llm writes one);
// without it the file is written to a temporary directory first.
//
//	go test ./engine/llm/bench -run '^$' -bench BatchStep -benchtime 20x
func BenchmarkBatchStep(b *testing.B) {
	path := os.Getenv("HARK_BENCH_MODEL")
	if path == "" {
		path = filepath.Join(b.TempDir(), "smollm2-shape-q8_0.gguf")
		if err := WriteFile(path, SmolLM2, ggml.Q8_0, shared.Path(b, "llm-kit", "tokenizers", "smollm2"), 1); err != nil {
			b.Fatal(err)
		}
	}
	f, err := gguf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) { benchBatchStep(b, f, threads) })
	}
}

func benchBatchStep(b *testing.B, f *gguf.File, threads int) {
	be := cpu.New(cpu.Options{Threads: threads})
	defer be.Close()
	const pos, block, maxRows = 128, 16, 8
	bt, err := llm.LoadBatch(be, f, llm.BatchOptions{Rows: maxRows, Seqs: maxRows, BlockSize: block, Blocks: maxRows * (pos/block + 1), Context: 256})
	if err != nil {
		b.Fatal(err)
	}
	defer bt.Close()
	for _, m := range []int{1, 2, 4, 8} {
		rows := make([]llm.Row, m)
		for i := range rows {
			table := make([]int32, pos/block+1)
			for j := range table {
				table[j] = int32(i*len(table) + j)
			}
			rows[i] = llm.Row{Token: int32(100 + 37*i), Pos: pos, Table: table}
		}
		b.Run(fmt.Sprintf("rows=%d", m), func(b *testing.B) {
			if err := bt.Step(rows); err != nil { // warm: pages, packs, pool
				b.Fatal(err)
			}
			c0 := cpuTime()
			b.ResetTimer()
			for range b.N {
				if err := bt.Step(rows); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			ms := float64(cpuTime()-c0) / float64(time.Millisecond) / float64(b.N)
			b.ReportMetric(ms, "cpu-ms/step")
			b.ReportMetric(ms/float64(m), "cpu-ms/row")
			b.ReportMetric(float64(b.Elapsed())/float64(time.Millisecond)/float64(b.N)/float64(m), "ms/row")
		})
	}
}

// cpuTime is the process's user and system time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
