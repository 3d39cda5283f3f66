package parity

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/internal/shared"
)

func load(t *testing.T, c Config, scheme string, backend *cpu.Backend) *llm.Model {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, Write(c, &buf, scheme))
	path := filepath.Join(t.TempDir(), c.Name+"-"+scheme+".gguf")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	f, err := gguf.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	m, err := llm.Load(backend, f, llm.Options{Context: 128, F32Cache: scheme == F32})
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return m
}

func readRef(t *testing.T, c Config) Reference {
	var ref Reference
	shared.ReadJSON(t, filepath.Join("testdata", c.Name+".json.gz"), &ref)
	require.Equal(t, c.Arch, ref.Architecture)
	return ref
}

// f32 models written by Hark's GGUF writer give transformers' logits at
// every prompt position and generated step within 1e-4 of the largest
// logit, and the same 32 greedy tokens.
func TestF32AgainstTransformers(t *testing.T) {
	backend := cpu.New(cpu.Options{})
	defer backend.Close()
	for _, c := range Configs {
		t.Run(c.Name, func(t *testing.T) {
			ref := readRef(t, c)
			m := load(t, c, F32, backend)
			worst := checkF32(t, m, ref)
			t.Logf("%s: largest logit difference %.2g of the largest logit", c.Name, worst)
		})
	}
}

// checkF32 feeds every reference prompt token by token and as one batched
// prefill, then generates greedily: logits within 1e-4 of the largest
// logit at every prompt position and recorded step, the same greedy
// tokens. It returns the largest difference.
func checkF32(t *testing.T, m *llm.Model, ref Reference) float64 {
	t.Helper()
	worst := 0.0
	for _, r := range ref.Results {
		m.Reset()
		for i := range r.Prompt {
			logits, err := m.Prefill(r.Prompt[i : i+1])
			require.NoError(t, err)
			rel, _ := Diff(r.PromptLogits[i], logits)
			worst = math.Max(worst, rel)
			require.LessOrEqual(t, rel, 1e-4, "prompt %v position %d", r.Prompt, i)
		}
		// The whole prompt as one batched prefill gives the last row.
		m.Reset()
		logits, err := m.Prefill(r.Prompt)
		require.NoError(t, err)
		rel, _ := Diff(r.PromptLogits[len(r.Prompt)-1], logits)
		require.LessOrEqual(t, rel, 1e-4, "batched prefill of %v", r.Prompt)

		var got []int32
		for s := range r.Greedy {
			next := argmax(logits)
			if s < len(r.StepLogits) {
				rel, _ := Diff(r.StepLogits[s], logits)
				worst = math.Max(worst, rel)
				require.LessOrEqual(t, rel, 1e-4, "generated step %d", s)
			}
			got = append(got, next)
			logits, err = m.Decode(next)
			require.NoError(t, err)
		}
		require.Equal(t, r.Greedy, got, "greedy tokens after %v", r.Prompt)
	}
	return worst
}

// Quantized versions of the same models stay within the error their
// formats imply. Measured against the f32 transformers logits (relative
// RMS over the Sampled logits, first prompt's positions): Q8_0 weights and
// activations (8-bit blocks) with an f16 KV cache move logits by 1.0-1.2%
// RMS; Q4_K_M (4-bit weights with 6-bit super-block scales, Q6_K for
// attn_v, ffn_down and the output, Q5_0/Q8_0 where rows are not whole
// 256-blocks, as llama.cpp falls back) by 3-5.5%. The bounds are those
// figures with margin; a broken kernel gives errors of order 100%.
func TestQuantizedAgainstTransformers(t *testing.T) {
	backend := cpu.New(cpu.Options{})
	defer backend.Close()
	bounds := map[string]float64{Q8_0: 0.025, Q4_K_M: 0.12}
	for _, c := range Configs {
		for _, scheme := range []string{Q8_0, Q4_K_M} {
			t.Run(fmt.Sprintf("%s/%s", c.Name, scheme), func(t *testing.T) {
				ref := readRef(t, c)
				m := load(t, c, scheme, backend)
				r := ref.Results[0]
				worst := 0.0
				for i, tok := range r.Prompt {
					var logits []float32
					var err error
					if i == 0 {
						logits, err = m.Prefill(r.Prompt[:1])
					} else {
						logits, err = m.Decode(tok)
					}
					require.NoError(t, err)
					_, rms := Diff(r.PromptLogits[i], logits)
					worst = math.Max(worst, rms)
				}
				t.Logf("%s %s: worst relative RMS logit error %.3g", c.Name, scheme, worst)
				require.LessOrEqual(t, worst, bounds[scheme])
			})
		}
	}
}

func argmax(s []float32) int32 {
	best := 0
	for i, v := range s {
		if v > s[best] {
			best = i
		}
	}
	return int32(best)
}
