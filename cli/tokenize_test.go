package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

func TestTokenize(t *testing.T) {
	tok := func(elem ...string) string {
		return shared.Path(t, append([]string{"llm-kit", "tokenizers"}, elem...)...)
	}
	stories := shared.Path(t, "models", "stories260K.gguf")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		// Expected ids are from the llm-kit references (transformers.js,
		// tiktoken, SentencePiece, llama.cpp).
		{"smollm2 dir", []string{"--tokenizer", tok("smollm2"), "text<|im_end|>more text"}, "[2692,2,3143,1694]\n"},
		{"llama3 json.gz", []string{"--tokenizer", tok("llama3", "tokenizer.json.gz"), "--add-special", " Hello"}, "[128000,22691]\n"},
		{"llama3 tiktoken", []string{"--tokenizer", tok("llama3", "tokenizer.model"), "--add-special", " Hello"}, "[128000,22691]\n"},
		{"llama2 spm", []string{"--tokenizer", tok("llama2", "tokenizer.model"), " Hello"}, "[29871,15043]\n"},
		{"qwen vocab.json", []string{"--tokenizer", tok("qwen2.5", "vocab.json"), "<|im_start|>"}, "[151644]\n"},
		{"empty", []string{"--tokenizer", tok("smollm2"), ""}, "[]\n"},
		{"gguf", []string{"--model", stories, "Hello world"}, "[346,306,414,263,304,341]\n"},
		{"gguf add-special", []string{"--model", stories, "--add-special", "<s>[INST] Hi"}, "[1,1,410,508,442,458,437,434,509,320,417]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := runHark(t, append([]string{"tokenize"}, tc.args...)...)
			require.NoError(t, err)
			require.Equal(t, tc.want, out)
		})
	}
}

func TestTokenizeErrors(t *testing.T) {
	dir := t.TempDir()
	_, _, err := runHark(t, "tokenize", "x")
	require.ErrorContains(t, err, "exactly one of --model")
	_, _, err = runHark(t, "tokenize", "--model", "a.gguf", "--tokenizer", "b", "x")
	require.ErrorContains(t, err, "exactly one of --model")
	_, _, err = runHark(t, "tokenize", "--tokenizer", dir, "x")
	require.ErrorContains(t, err, "holds no tokenizer.json")
	bad := filepath.Join(dir, "tokenizer.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"model":{"type":"Unigram"}}`), 0o644))
	_, _, err = runHark(t, "tokenize", "--tokenizer", bad, "x")
	require.ErrorContains(t, err, `"Unigram"`)
	_, _, err = runHark(t, "tokenize", "--model", filepath.Join(dir, "missing.gguf"), "x")
	require.Error(t, err)
}
