package whisper

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/blas"
	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/internal/shared"
)

// TestWhisperBarriers counts the pool barriers of one encoder window and
// of one decoder step (PassStep) of the kit tiny.en q8_0 model at 16
// workers (cpu.BarrierCount: what the code asks for, the same on any
// machine), by kernel. At 16 threads the encoder took more wall time than
// all of a file's decoded tokens and its workers waited for the next job in
// 44% of the samples (BENCHMARKS.md, issue #37's round 3): a change that
// adds barriers to either must say so here.
func TestWhisperBarriers(t *testing.T) {
	if !blas.Available() || blas.Threads() == 0 {
		t.Skip("no sgemm that runs one thread per call: attention takes the per-head path")
	}
	f, err := OpenFile(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"))
	require.NoError(t, err)
	defer f.Close()
	be := cpu.New(cpu.Options{Threads: 16})
	defer be.Close()
	m, err := f.Load(be, Options{})
	require.NoError(t, err)
	defer m.Close()
	sp, err := SpecialsFor(m.H.NVocab)
	require.NoError(t, err)
	mel := make([]float32, m.H.NMels*m.H.NFrames())
	for i := range mel {
		mel[i] = float32(i%97)/97 - 0.5
	}
	count := func(what string, most uint64, run func() error) {
		var c cpu.BarrierCount
		be.Pool().CountBarriers(&c)
		require.NoError(t, run())
		be.Pool().CountBarriers(nil)
		var parts []string
		for k, v := range c.ByKernel() {
			name := "pass end"
			if k != 0 {
				name = k.String()
			}
			parts = append(parts, fmt.Sprintf("%s %d", name, v))
		}
		sort.Strings(parts)
		t.Logf("%s at 16 workers: %d barriers (%s)", what, c.Total(), strings.Join(parts, ", "))
		require.LessOrEqual(t, c.Total(), most, what)
	}
	// issue #37's fourth round: 93, attention 1 a layer (its blocks over
	// all 6 heads, reading the keys and values in place) where the per-head
	// path took a packing job a head and 3 a score block of 174 rows: 168 a
	// layer, 672 of the window's 761.
	count("one encoder window", 93, func() error { return m.Encode(mel) })
	_, err = m.Prompt([]int32{sp.SOT, sp.SOT + 1}, 0)
	require.NoError(t, err)
	// 29: cross-attention 1 a layer (runs of keys, each its scores, partial
	// softmax and values, the last run of a head merging them; round 6)
	// where it took 2 (the scores, then the softmax and the values by
	// slices of each head: 33) and before that 3 (37).
	count("one decoder step", 29, func() error { _, err := m.Prompt([]int32{400}, 2); return err })
}
