package tokenizer

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

// vocabCase is one llama.cpp vocab test: input text and the ids HF's
// Python AutoTokenizer gave (add_special_tokens=False).
type vocabCase struct {
	text string
	ids  []int32
}

// loadVocabTest reads ggml-vocab-NAME.gguf.inp/.out.
func loadVocabTest(t *testing.T, name string) []vocabCase {
	t.Helper()
	inp, err := os.ReadFile(shared.Path(t, "llm-kit", "gguf-vocab", "ggml-vocab-"+name+".gguf.inp"))
	require.NoError(t, err)
	out, err := os.ReadFile(shared.Path(t, "llm-kit", "gguf-vocab", "ggml-vocab-"+name+".gguf.out"))
	require.NoError(t, err)
	texts := strings.Split(string(inp), "\n__ggml_vocab_test__\n")
	require.Equal(t, "", texts[len(texts)-1], "the .inp file ends with a separator")
	texts = texts[:len(texts)-1]
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, lines, len(texts), "%s: one .out line per input", name)
	cases := make([]vocabCase, len(texts))
	for i, s := range texts {
		ids := []int32{}
		for _, f := range strings.Fields(lines[i]) {
			n, err := strconv.Atoi(f)
			require.NoError(t, err)
			ids = append(ids, int32(n))
		}
		cases[i] = vocabCase{text: s, ids: ids}
	}
	return cases
}

func checkVocabTest(t *testing.T, tk *Tokenizer, name string) {
	t.Helper()
	cases := loadVocabTest(t, name)
	pass := 0
	for i, c := range cases {
		got := nonNil(tk.Encode(c.text, false))
		if assertEqual(c.ids, got) {
			pass++
		} else {
			t.Errorf("%s case %d %q:\nwant %v\n got %v", name, i, c.text, c.ids, got)
		}
	}
	t.Logf("%s: %d/%d llama.cpp vocab cases pass", name, pass, len(cases))
}

// TestLlamaCppVocabTests runs llama.cpp's tokenizer test strings through the
// Hugging Face files of the same tokenizers.
func TestLlamaCppVocabTests(t *testing.T) {
	for _, tc := range []struct{ vocab, path string }{
		{"llama-bpe", "llama3"},
		{"llama-bpe", "llama3/tokenizer.model"},
		{"qwen2", "qwen2.5"},
		{"smollm", "smollm2"},
		{"llama-spm", "llama2/tokenizer.model"},
		{"phi-3", "phi3-mini"},
	} {
		t.Run(tc.vocab+"/"+tc.path, func(t *testing.T) {
			tk, err := Load(shared.Path(t, append([]string{"llm-kit", "tokenizers"}, strings.Split(tc.path, "/")...)...))
			require.NoError(t, err)
			checkVocabTest(t, tk, tc.vocab)
		})
	}
}
