package bench

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/llm"
)

// TestPrefillBarriersChunked is TestPrefillBarriers with the layer blocks
// in chunks of 64 rows (cpu.Options.ChunkRows): each of a pp512's 8 chunks
// takes a layer's 14 barriers, so a chunked step takes about 8× the whole
// step's. On a loaded 2-core machine those waits, not the work, are what a
// chunked prefill costs (BENCHMARKS.md, issue #37, branch chunk37).
func TestPrefillBarriersChunked(t *testing.T) {
	f := openSmolQ8(t)
	const most = 3400
	be := cpu.New(cpu.Options{Threads: 16, ChunkRows: 64})
	defer be.Close()
	m, err := llm.Load(be, f, llm.Options{Context: 512, Batch: 512})
	require.NoError(t, err)
	defer m.Close()
	var c cpu.BarrierCount
	be.Pool().CountBarriers(&c)
	_, err = m.Prefill(randomTokens(512, m.H.NVocab))
	require.NoError(t, err)
	be.Pool().CountBarriers(nil)
	t.Logf("pp512 in chunks of 64 at 16 workers: %d barriers (%s)", c.Total(), barrierParts(&c, 1))
	require.LessOrEqual(t, c.Total(), uint64(most))
}
