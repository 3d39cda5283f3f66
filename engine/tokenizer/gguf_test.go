package tokenizer

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

// TestGGUFVocabFiles checks the SentencePiece path of FromGGUF on llama.cpp's
// vocab-only GGUF files against their HF-made .out files.
func TestGGUFVocabFiles(t *testing.T) {
	for _, name := range []string{"llama-spm", "phi-3"} {
		t.Run(name, func(t *testing.T) {
			tk, err := LoadGGUF(shared.Path(t, "llm-kit", "gguf-vocab", "ggml-vocab-"+name+".gguf"))
			require.NoError(t, err)
			checkVocabTest(t, tk, name)
			require.Equal(t, int32(1), tk.Special().BOS)
			require.Equal(t, []int32{1, 15043}, tk.Encode("Hello", true), "add_bos_token adds BOS")
		})
	}
	tk, err := LoadGGUF(shared.Path(t, "llm-kit", "gguf-vocab", "ggml-vocab-phi-3.gguf"))
	require.NoError(t, err)
	require.Equal(t, int32(32000), tk.Special().EOS)
	require.Equal(t, int32(32007), tk.Special().EOT)
	require.Contains(t, tk.StopIDs(), int32(32007))
	require.Equal(t, 32064, tk.VocabSize())
}

// TestGGUFStories260K checks llama.cpp's own tokenization of the
// stories260K model (tokenize_cases of the golden file).
func TestGGUFStories260K(t *testing.T) {
	tk, err := LoadGGUF(shared.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)
	g := shared.LoadStoriesGolden(t)
	require.NotEmpty(t, g.TokenizeCases)
	pass := 0
	for _, c := range g.TokenizeCases {
		ok := assertEqual(nonNil(c.Parsed), nonNil(tk.Encode(c.Text, false))) &&
			assertEqual(nonNil(c.IDs), nonNil(tk.EncodeWith(c.Text, EncodeOptions{}))) &&
			c.Decoded == tk.Decode(c.IDs) && c.Decoded == streamAll(tk, c.IDs)
		if !ok {
			t.Errorf("case %d %q: want %v / %v %q, got %v / %v %q", c.ID, c.Text, c.Parsed, c.IDs, c.Decoded,
				tk.Encode(c.Text, false), tk.EncodeWith(c.Text, EncodeOptions{}), tk.Decode(c.IDs))
			continue
		}
		pass++
	}
	t.Logf("stories260K: %d/%d tokenize cases pass", pass, len(g.TokenizeCases))
	require.NotEmpty(t, g.Results)
	for _, r := range g.Results {
		require.Equal(t, nonNil(r.PromptTokens), nonNil(tk.Encode(r.Prompt, true)), "prompt %q", r.Prompt)
	}
}

// TestGGUFByteLevel writes a GGUF vocabulary the way llama.cpp's converter
// does for SmolLM2 (tokens, types, merges, pre "smollm") and checks the
// byte-level path of FromGGUF against llama.cpp's smollm test file.
func TestGGUFByteLevel(t *testing.T) {
	dir := shared.Path(t, "llm-kit", "tokenizers", "smollm2")
	ref, err := Load(dir)
	require.NoError(t, err)
	var vm map[string]int32
	data, err := os.ReadFile(filepath.Join(dir, "vocab.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &vm))
	tokens := make([]string, len(vm))
	for s, id := range vm {
		tokens[id] = s
	}
	types := make([]int32, len(tokens))
	for i := range types {
		types[i] = pieceNormal
		if ref.IsSpecial(int32(i)) {
			types[i] = pieceControl
		}
	}
	mergeData, err := os.ReadFile(filepath.Join(dir, "merges.txt"))
	require.NoError(t, err)
	var merges []string
	for _, l := range bytes.Split(bytes.TrimSpace(mergeData), []byte("\n")) {
		if !bytes.HasPrefix(l, []byte("#version")) {
			merges = append(merges, string(l))
		}
	}
	var buf bytes.Buffer
	w := gguf.NewWriter(&buf)
	kvs := map[string]gguf.Value{
		"tokenizer.ggml.model":        gguf.String("gpt2"),
		"tokenizer.ggml.pre":          gguf.String("smollm"),
		"tokenizer.ggml.tokens":       gguf.ArrayValue(gguf.NewArray(tokens)),
		"tokenizer.ggml.token_type":   gguf.ArrayValue(gguf.NewArray(types)),
		"tokenizer.ggml.merges":       gguf.ArrayValue(gguf.NewArray(merges)),
		"tokenizer.ggml.bos_token_id": gguf.Uint32(1),
		"tokenizer.ggml.eos_token_id": gguf.Uint32(2),
	}
	keys := make([]string, 0, len(kvs))
	for k := range kvs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		require.NoError(t, w.AddKV(k, kvs[k]))
	}
	require.NoError(t, w.Close())
	f, err := gguf.Parse(buf.Bytes())
	require.NoError(t, err)
	tk, err := FromGGUFFile(f)
	require.NoError(t, err)
	checkVocabTest(t, tk, "smollm")
	for _, c := range loadTokref(t, "smollm2") {
		require.Equal(t, nonNil(c.IDs), nonNil(tk.Encode(c.Text, false)), "case %d %q", c.ID, c.Text)
		require.Equal(t, c.Decoded, tk.Decode(c.IDs), "case %d", c.ID)
		require.Equal(t, *c.DecodedSkipSpecial, tk.DecodeSkipSpecial(c.IDs), "case %d", c.ID)
	}
	require.Equal(t, int32(2), tk.Special().EOS)
}

// TestGGUFErrors: unusable metadata gives clear errors, not panics.
func TestGGUFErrors(t *testing.T) {
	parse := func(kvs map[string]gguf.Value) error {
		var buf bytes.Buffer
		w := gguf.NewWriter(&buf)
		keys := make([]string, 0, len(kvs))
		for k := range kvs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			require.NoError(t, w.AddKV(k, kvs[k]))
		}
		require.NoError(t, w.Close())
		f, err := gguf.Parse(buf.Bytes())
		require.NoError(t, err)
		_, err = FromGGUFFile(f)
		return err
	}
	toks := gguf.ArrayValue(gguf.NewArray([]string{"a", "b", "ab"}))
	require.ErrorContains(t, parse(map[string]gguf.Value{}), "tokenizer.ggml.model")
	require.ErrorContains(t, parse(map[string]gguf.Value{"tokenizer.ggml.model": gguf.String("bert"), "tokenizer.ggml.tokens": toks}), `"bert"`)
	require.ErrorContains(t, parse(map[string]gguf.Value{"tokenizer.ggml.model": gguf.String("llama"), "tokenizer.ggml.tokens": toks}), "scores")
	require.ErrorContains(t, parse(map[string]gguf.Value{"tokenizer.ggml.model": gguf.String("gpt2"), "tokenizer.ggml.tokens": toks,
		"tokenizer.ggml.merges": gguf.ArrayValue(gguf.NewArray([]string{"a c"}))}), "missing from the vocabulary")
	require.ErrorContains(t, parse(map[string]gguf.Value{"tokenizer.ggml.model": gguf.String("gpt2"), "tokenizer.ggml.tokens": toks,
		"tokenizer.ggml.merges": gguf.ArrayValue(gguf.NewArray([]string{"a b"})), "tokenizer.ggml.pre": gguf.String("tekken")}), `"tekken"`)
	require.ErrorContains(t, parse(map[string]gguf.Value{"tokenizer.ggml.model": gguf.String("llama"), "tokenizer.ggml.tokens": toks,
		"tokenizer.ggml.scores": gguf.ArrayValue(gguf.NewArray([]float32{0}))}), "scores")
}

// TokenBytes spells each token as it stands inside a text: the pieces of
// "Once upon a time" concatenate to the text with the dummy prefix's
// space that Decode strips at the start.
func TestTokenBytes(t *testing.T) {
	tk, err := LoadGGUF(shared.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)
	ids := tk.Encode("Once upon a time", false)
	require.Greater(t, len(ids), 1)
	var b []byte
	for _, id := range ids {
		b = append(b, tk.TokenBytes(id)...)
	}
	require.Equal(t, " Once upon a time", string(b))
	require.Equal(t, "Once upon a time", tk.Decode(ids))
	require.Equal(t, " upon", string(tk.TokenBytes(tk.Encode("Once upon", false)[1])), "Decode of the one id would strip its space")
}
