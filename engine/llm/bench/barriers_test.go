package bench

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/internal/shared"
)

// TestDecodeBarriers counts the pool barriers (cpu.BarrierCount: what the
// code waits for, not what the clock sees) one decoded token of the
// SmolLM2-135M q8_0 shape takes, by kernel, at 2 and 16 workers, over
// tg128's steps. The count is the same at both (work too small to split
// runs on the caller at any worker count), and a change that adds
// barriers to the decode step must say so here.
func TestDecodeBarriers(t *testing.T) {
	f := openSmolQ8(t)
	// a token's barriers before issue #37's second part: 4 a layer (the
	// fences before qkv, RopeAttention, gate|up and down), attention's
	// own from 29 cached positions on (23.4 a token over tg128), the
	// pass's end
	const most = 18488
	totals := map[int]uint64{}
	for _, threads := range []int{2, 16} {
		be := cpu.New(cpu.Options{Threads: threads})
		m, err := llm.Load(be, f, llm.Options{Context: 160, Batch: 16})
		require.NoError(t, err)
		const n = 128 // tg128's steps, from an empty context
		var c cpu.BarrierCount
		be.Pool().CountBarriers(&c)
		for _, tok := range randomTokens(n, m.H.NVocab) {
			_, err := m.Decode(tok)
			require.NoError(t, err)
		}
		be.Pool().CountBarriers(nil)
		t.Logf("%2d workers: %g barriers a token (%s)", threads, float64(c.Total())/n, barrierParts(&c, n))
		totals[threads] = c.Total()
		m.Close()
		be.Close()
	}
	require.Equal(t, totals[2], totals[16], "barriers at 2 and 16 workers")
	require.LessOrEqual(t, totals[16], uint64(most))
}

// openSmolQ8 writes the SmolLM2-135M q8_0 shape (random weights) into a
// temporary folder and opens it; the test closes it.
func openSmolQ8(t *testing.T) *gguf.File {
	tokDir := shared.Path(t, "llm-kit", "tokenizers", "smollm2")
	path := filepath.Join(t.TempDir(), "q8_0.gguf")
	require.NoError(t, WriteFile(path, SmolLM2, ggml.Q8_0, tokDir, 1))
	f, err := gguf.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

// barrierParts lists c's counts by kernel, each over per, sorted by name.
func barrierParts(c *cpu.BarrierCount, per int) string {
	var parts []string
	for k, v := range c.ByKernel() {
		name := "pass end"
		if k != 0 {
			name = k.String()
		}
		parts = append(parts, fmt.Sprintf("%s %g", name, float64(v)/float64(per)))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
