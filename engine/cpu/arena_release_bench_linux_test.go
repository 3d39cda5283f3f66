package cpu

import (
	"fmt"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/llm/bench"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

// BenchmarkDroppedPrefill measures what giving a prefill's scratch back
// costs the next prefill (its pages fault in again): pp512 and pp32 on
// the SmolLM2-135M shape (q8_0, random weights) with the default worker
// count, on an executor that gives the pages back and on one that keeps
// them, each prefill followed by one decode step (unmeasured: it is the
// pass that gives the pages back), alternated in one process so that a loaded
// machine's drift falls on both. It reports the medians of each's wall
// time and of the process's system CPU time a prefill (the faults and
// the madvise calls are system time; the workers' spin is user time).
func BenchmarkDroppedPrefill(b *testing.B) {
	path := filepath.Join(b.TempDir(), "smollm2-135m-q8_0.gguf")
	require.NoError(b, bench.WriteFile(path, bench.SmolLM2, ggml.Q8_0, shared.Path(b, "llm-kit", "tokenizers", "smollm2"), 1))
	f, err := gguf.Open(path)
	require.NoError(b, err)
	defer f.Close()
	var ex [2]*Exec // keeps, gives back
	for i := range ex {
		be := &recordingBackend{Backend: New(Options{})}
		defer be.Close()
		m, err := llm.Load(be, f, llm.Options{Context: 1024, Batch: 512}) // room for the decode after a pp512
		require.NoError(b, err)
		defer m.Close()
		ex[i] = be.ex
	}
	require.NotNil(b, ex[1].drops[llm.PassPrefill])
	ex[0].drops = nil
	for _, rows := range []int64{512, 32} {
		b.Run(fmt.Sprintf("pp%d", rows), func(b *testing.B) {
			v := plan.Vars{plan.VarNTok: rows, plan.VarKVLen: rows}
			dv := plan.Vars{plan.VarPos: rows, plan.VarNTok: 1, plan.VarKVLen: rows + 1}
			var wall, sys [2][]float64
			run := func(k int) {
				var r0, r1 syscall.Rusage
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
				t0 := time.Now()
				require.NoError(b, ex[k].Run(llm.PassPrefill, &v))
				wall[k] = append(wall[k], float64(time.Since(t0).Microseconds())/1e3)
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
				sys[k] = append(sys[k], float64(r1.Stime.Nano()-r0.Stime.Nano())/1e6)
				require.NoError(b, ex[k].Run(llm.PassDecode, &dv))
			}
			run(0)
			run(1)
			wall, sys = [2][]float64{}, [2][]float64{}
			b.ResetTimer()
			for i := range b.N {
				run(i % 2)
				run(1 - i%2)
			}
			b.StopTimer()
			b.ReportMetric(0, "ns/op")
			for k, name := range []string{"keep", "drop"} {
				b.ReportMetric(median(wall[k]), name+"-ms")
				b.ReportMetric(median(sys[k]), name+"-sys-ms")
			}
		})
	}
}

// median is the middle of xs (the mean of the two middle ones).
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}
