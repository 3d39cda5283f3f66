package llm

import (
	"encoding/binary"
	"math"
	"os"
	"testing"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

func loadGolden(t *testing.T) (*shared.StoriesGolden, []float32) {
	t.Helper()
	g := shared.LoadStoriesGolden(t)
	raw, err := os.ReadFile(shared.Path(t, "llm-kit", "golden", "stories260K.logits_f32.bin"))
	require.NoError(t, err)
	lg := make([]float32, len(raw)/4)
	for i := range lg {
		lg[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return g, lg
}

func openStories(t *testing.T) *gguf.File {
	t.Helper()
	f, err := gguf.Open(shared.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func newCPU(t *testing.T) *cpu.Backend {
	be := cpu.New(cpu.Options{})
	t.Cleanup(be.Close)
	return be
}

// maxDiff is the largest |a-b| over a row and the largest |b|.
func maxDiff(a, b []float32) (d, mag float64) {
	for i := range b {
		d = max(d, math.Abs(float64(a[i]-b[i])))
		mag = max(mag, math.Abs(float64(b[i])))
	}
	return d, mag
}

// goldenTol bounds the logit difference to llama.cpp, relative to the
// row's largest magnitude. It is not 1e-4: the golden run used llama.cpp's
// CPU flash attention, which rounds Q to f16 and accumulates the weighted
// V sum in f16. TestGoldenRoundingCause shows that emulating exactly that
// reproduces the golden rows it can reach to 1e-6, and TestStoriesExact
// holds our logits to 1e-5 against an exact float64 forward pass. The
// measured difference is 1.77e-3 (logged below).
const goldenTol = 2.5e-3

// TestGoldenStories feeds every golden prompt and its 64 greedy tokens:
// logits of every position must match llama.cpp's within goldenTol of the
// largest logit magnitude, prompt positions both through prefill (last
// row) and token by token (every row), and greedy selection on the
// backend must reproduce the tokens exactly.
func TestGoldenStories(t *testing.T) {
	g, ref := loadGolden(t)
	m, err := Load(newCPU(t), openStories(t), Options{})
	require.NoError(t, err)
	defer m.Close()
	nv := m.H.NVocab
	require.Equal(t, g.Model.NVocab, nv)
	var worst float64
	check := func(what string, got []float32, row int, off int) {
		want := ref[off/4+row*nv : off/4+(row+1)*nv]
		d, mag := maxDiff(got, want)
		worst = max(worst, d/mag)
		require.LessOrEqual(t, d, goldenTol*mag, "%s row %d: max diff %g, magnitude %g", what, row, d, mag)
	}
	for _, r := range g.Results {
		require.Equal(t, r.Logits.Rows, len(r.PromptTokens)+len(r.GeneratedTokens)-1)
		// Prompt token by token: logits of every prompt row.
		m.Reset()
		for i, tok := range r.PromptTokens {
			lg, err := m.Decode(tok)
			require.NoError(t, err)
			check(r.Prompt+" (decode)", lg, i, r.Logits.Offset)
		}
		// Prefill, then greedy selection on the backend.
		m.Reset()
		lg, err := m.Prefill(r.PromptTokens)
		require.NoError(t, err)
		np := len(r.PromptTokens)
		check(r.Prompt+" (prefill)", lg, np-1, r.Logits.Offset)
		var gen []int32
		for i := range r.GeneratedTokens {
			tok, err := m.selectNext(false, 0)
			require.NoError(t, err)
			gen = append(gen, tok)
			if i == len(r.GeneratedTokens)-1 {
				break
			}
			require.NoError(t, m.stepNext())
			lg, err := m.Logits()
			require.NoError(t, err)
			check(r.Prompt+" (generate)", lg, np+i, r.Logits.Offset)
		}
		require.Equal(t, r.GeneratedTokens, gen, "prompt %q", r.Prompt)
	}
	t.Logf("largest logit difference: %.3g of the largest magnitude", worst)
}

// TestStoriesExact holds the plan, with an f32 KV cache, to an independent
// float64 forward pass over every golden sequence. (With f16 caches both
// sides round K and V to f16 from slightly different values, and an
// element on a rounding boundary moves a logit by ~1e-4 relative.)
func TestStoriesExact(t *testing.T) {
	g, _ := loadGolden(t)
	f := openStories(t)
	m, err := Load(newCPU(t), f, Options{Batch: 7, F32Cache: true})
	require.NoError(t, err)
	defer m.Close()
	r := &refModel{a: m.Arch, h: m.H, f: f}
	var worst float64
	for _, res := range g.Results {
		toks := append(append([]int32{}, res.PromptTokens...), res.GeneratedTokens...)
		want := r.logits(t, toks)
		m.Reset()
		for i, tok := range toks {
			lg, err := m.Decode(tok)
			require.NoError(t, err)
			d, mag := maxDiff64(lg, want[i])
			worst = max(worst, d/mag)
			require.LessOrEqual(t, d, 1e-5*mag, "%q row %d", res.Prompt, i)
		}
		// chunked prefill (batch 7) reaches the same last row
		m.Reset()
		lg, err := m.Prefill(toks)
		require.NoError(t, err)
		d, mag := maxDiff64(lg, want[len(toks)-1])
		require.LessOrEqual(t, d, 1e-5*mag, "%q prefill", res.Prompt)
	}
	t.Logf("largest difference to the float64 forward pass: %.3g of the largest magnitude", worst)
}

// TestGoldenRoundingCause emulates llama.cpp's CPU flash attention (Q and
// the V accumulator in f16) in the float64 forward pass: the golden rows
// whose attention sees 2 or 3 keys then agree to 1e-6, so the remaining
// difference to the golden logits is llama.cpp's rounding, not ours.
// (Later rows diverge from the emulation too: llama.cpp's kernel tiles
// longer key ranges differently.)
func TestGoldenRoundingCause(t *testing.T) {
	g, ref := loadGolden(t)
	f := openStories(t)
	a, err := LookupArch("llama")
	require.NoError(t, err)
	h, err := ReadHParams(f, a)
	require.NoError(t, err)
	r := &refModel{a: a, h: h, f: f}
	r.half.kv, r.half.q, r.half.fa = true, true, true
	nv := h.NVocab
	for _, res := range g.Results {
		toks := append(append([]int32{}, res.PromptTokens...), res.GeneratedTokens...)[:3]
		got := r.logits(t, toks)
		for i := 1; i < 3; i++ {
			want := ref[res.Logits.Offset/4+i*nv : res.Logits.Offset/4+(i+1)*nv]
			g32 := make([]float32, nv)
			for j := range g32 {
				g32[j] = float32(got[i][j])
			}
			d, mag := maxDiff(g32, want)
			require.LessOrEqual(t, d, 1e-6*mag, "%q row %d", res.Prompt, i)
		}
	}
}
