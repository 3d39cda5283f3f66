package msltest

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/llm/parity"
	"github.com/harkapp/hark/internal/shared"
)

// TestE2EGemma3: the tiny random Gemma 3 of testdata/gemma3 (sliding-window
// and global layers, GELU-gated FFN, four norms per layer) through the
// executor's kernels gives transformers' logits and greedy tokens: the
// first prompt as one prefill (tiled/mma attention, gelu_mul), then decode
// steps (split attention over a window, gelu_mul_mat_vec).
func TestE2EGemma3(t *testing.T) {
	dir := shared.Fixture(t, "gemma3")
	ref, err := parity.ReadReference(filepath.Join(dir, "gemma3-tiny.json"), "gemma3")
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, parity.WriteGemma3(dir, &buf, nil))
	path := filepath.Join(t.TempDir(), "gemma3-tiny.gguf")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	m, err := llm.Load(TestBackend(t), f, llm.Options{Context: 64, F32Cache: true})
	require.NoError(t, err)
	defer m.Close()
	r := ref.Results[1] // 20 tokens, five windows' worth
	logits, err := m.Prefill(r.Prompt)
	require.NoError(t, err)
	worst, _ := parity.Diff(r.PromptLogits[len(r.Prompt)-1], logits)
	steps := 8
	if testing.Short() {
		steps = 3
	}
	var got []int32
	for s := range steps {
		next := int32(0)
		for i, v := range logits {
			if v > logits[next] {
				next = int32(i)
			}
		}
		if s < len(r.StepLogits) {
			rel, _ := parity.Diff(r.StepLogits[s], logits)
			worst = math.Max(worst, rel)
		}
		got = append(got, next)
		logits, err = m.Decode(next)
		require.NoError(t, err)
	}
	require.Equal(t, r.Greedy[:steps], got)
	t.Logf("gemma3 on the executor: largest logit difference %.2g of the largest logit", worst)
	require.LessOrEqual(t, worst, 1e-4)
}
