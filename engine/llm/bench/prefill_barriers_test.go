package bench

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/llm"
)

// TestPrefillBarriers counts the pool barriers of one pp512 prefill (one
// 512-token chunk) of the SmolLM2-135M q8_0 shape at 16 workers, by
// kernel, as TestDecodeBarriers counts a decode step's. A change that adds
// barriers to the prefill must say so here.
func TestPrefillBarriers(t *testing.T) {
	f := openSmolQ8(t)
	for _, tc := range []struct {
		name  string
		chunk int // cpu.Options.ChunkRows
		// issue #37's second round (branch pp37): 14 a layer (each of the
		// 4 products' activation quantizing and GEMM jobs, the 2 norms,
		// rope_kv, silu_mul, attention's packing and blocks jobs for its
		// one batch of KV heads), the embedding and the pass's end. Before
		// it attention alone took 30 a layer (a packing job per KV head,
		// three jobs per head): 1,262 in all. In chunks of 64 rows each of
		// the 8 chunks takes a layer's 14 (branch chunk37): on a loaded
		// 2-core machine those waits, not the work, are what a chunked
		// prefill costs (BENCHMARKS.md).
		most uint64
	}{{"whole", 0, 422}, {"chunks of 64", 64, 3362}} {
		t.Run(tc.name, func(t *testing.T) {
			be := cpu.New(cpu.Options{Threads: 16, ChunkRows: tc.chunk})
			defer be.Close()
			m, err := llm.Load(be, f, llm.Options{Context: 512, Batch: 512})
			require.NoError(t, err)
			defer m.Close()
			var c cpu.BarrierCount
			be.Pool().CountBarriers(&c)
			_, err = m.Prefill(randomTokens(512, m.H.NVocab))
			require.NoError(t, err)
			be.Pool().CountBarriers(nil)
			t.Logf("pp512 at 16 workers, %s: %d barriers (%s)", tc.name, c.Total(), barrierParts(&c, 1))
			require.LessOrEqual(t, c.Total(), tc.most)
		})
	}
}
