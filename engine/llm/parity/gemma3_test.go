package parity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/chat"
	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/tokenizer"
	"github.com/harkapp/hark/internal/shared"
)

// Gemma3Dir is the transformers checkpoint and references of
// tools/parity/gemma3_hf.py (testdata/gemma3, see its README).
func gemma3Dir(t *testing.T) string { return shared.Fixture(t, "gemma3") }

// openGemma3 converts the checkpoint to GGUF in a temp dir and opens it.
func openGemma3(t *testing.T) *gguf.File {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, WriteGemma3(gemma3Dir(t), &buf, nil))
	path := filepath.Join(t.TempDir(), "gemma3-tiny.gguf")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	f, err := gguf.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func readGemma3Ref(t *testing.T) Reference {
	ref, err := ReadReference(filepath.Join(gemma3Dir(t), "gemma3-tiny.json"), "gemma3")
	require.NoError(t, err)
	return ref
}

// The descriptor says what transformers' config says: which layers slide,
// the local RoPE base, GELU(tanh), no soft-capping, 1/√headDim scores.
func TestGemma3DescriptorMatchesConfig(t *testing.T) {
	c, err := ReadGemma3Config(gemma3Dir(t))
	require.NoError(t, err)
	a, err := llm.LookupArch("gemma3")
	require.NoError(t, err)
	require.Len(t, c.LayerTypes, c.Layers)
	for l, typ := range c.LayerTypes {
		require.Equal(t, typ == "sliding_attention", a.Sliding(l), "layer %d is %s", l, typ)
	}
	require.Equal(t, a.LocalRopeBase, c.Rope["sliding_attention"].Theta)
	require.Equal(t, "gelu_pytorch_tanh", c.Activation)
	require.Equal(t, llm.FFNGELUGated, a.FFN)
	require.Nil(t, c.FinalSoftcap)
	require.Nil(t, c.AttnSoftcap)
	require.Equal(t, float64(c.HeadDim), c.QueryScalar)
	require.True(t, c.Tied)
	require.Less(t, c.Window, 11, "the window must be shorter than the prompts")
}

// The tiny random Gemma 3 (sliding-window layers with a 4-position window,
// a global layer, two RoPE bases, random norm weights) converted by Hark's
// GGUF writer gives transformers' logits at every prompt position and
// generated step within 1e-4 of the largest logit, and the same 32 greedy
// tokens, fed token by token and as one batched prefill.
func TestGemma3AgainstTransformers(t *testing.T) {
	backend := cpu.New(cpu.Options{})
	defer backend.Close()
	ref := readGemma3Ref(t)
	m, err := llm.Load(backend, openGemma3(t), llm.Options{Context: 128, F32Cache: true})
	require.NoError(t, err)
	defer m.Close()
	worst := checkF32(t, m, ref)
	t.Logf("gemma3: largest logit difference %.2g of the largest logit", worst)
}

// writeGGUF writes kvs (sorted) and no tensors.
func writeGGUF(t *testing.T, kvs map[string]gguf.Value) *gguf.File {
	t.Helper()
	var buf bytes.Buffer
	w := gguf.NewWriter(&buf)
	for _, k := range slices.Sorted(maps.Keys(kvs)) {
		require.NoError(t, w.AddKV(k, kvs[k]))
	}
	require.NoError(t, w.Close())
	f, err := gguf.Parse(buf.Bytes())
	require.NoError(t, err)
	return f
}

// A Gemma 3 GGUF vocabulary (SentencePiece pieces and scores, as
// llama.cpp's converter writes it) tokenizes the shared test strings as
// transformers does with the Hugging Face files, and its chat template
// renders as transformers' apply_chat_template.
func TestGemma3GGUFVocabAgainstTransformers(t *testing.T) {
	kvs, err := Gemma3Vocab(shared.Path(t, "llm-kit", "tokenizers", "gemma3"))
	require.NoError(t, err)
	f := writeGGUF(t, kvs)
	tk, err := tokenizer.FromGGUFFile(f)
	require.NoError(t, err)
	var ref struct {
		Cases []struct {
			ID             int     `json:"id"`
			Text           string  `json:"text"`
			IDs            []int32 `json:"ids"`
			IDsWithSpecial []int32 `json:"ids_with_special"`
			Decoded        string  `json:"decoded"`
		} `json:"cases"`
		Chat []struct {
			Messages            []chat.Message `json:"messages"`
			AddGenerationPrompt bool           `json:"add_generation_prompt"`
			Rendered            string         `json:"rendered"`
			IDs                 []int32        `json:"ids"`
		} `json:"chat"`
	}
	b, err := os.ReadFile(filepath.Join(gemma3Dir(t), "gemma3.tokref.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &ref))
	require.Len(t, ref.Cases, 45)
	for _, c := range ref.Cases {
		require.Equal(t, fmt.Sprint(c.IDs), fmt.Sprint(tk.Encode(c.Text, false)), "case %d %q", c.ID, c.Text)
		require.Equal(t, fmt.Sprint(c.IDsWithSpecial), fmt.Sprint(tk.Encode(c.Text, true)), "case %d %q with <bos>", c.ID, c.Text)
		require.Equal(t, c.Decoded, tk.Decode(c.IDs), "case %d", c.ID)
	}
	tpl, err := chat.ForModel(f, tk)
	require.NoError(t, err)
	require.NotEmpty(t, ref.Chat)
	for i, c := range ref.Chat {
		got, err := tpl.Render(c.Messages, chat.Options{AddGenerationPrompt: c.AddGenerationPrompt})
		require.NoError(t, err)
		require.Equal(t, c.Rendered, got, "chat case %d", i)
		require.Equal(t, c.IDs, tk.Encode(got, false), "chat case %d ids", i)
	}
}
