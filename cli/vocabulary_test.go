package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// hark transcribe --vocabulary steers the decoder with the terms (its
// log-probabilities move), rewrites "sounds like" spellings, and names
// the terms that did not fit the prompt.
func TestTranscribeVocabulary(t *testing.T) {
	model := shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-f16.bin")
	wav := shared.Path(t, "audio", "jfk.wav")
	dir := t.TempDir()
	list := filepath.Join(dir, "vocab.txt")
	require.NoError(t, os.WriteFile(list, []byte("Americans\nComrades = fellow\n"), 0o644))
	long := filepath.Join(dir, "long.txt")
	var b strings.Builder
	for i := range 80 { // far more than the prompt's share of the context
		fmt.Fprintf(&b, "Term%d\n", i)
	}
	require.NoError(t, os.WriteFile(long, []byte(b.String()), 0o644))

	type result struct {
		Text     string `json:"text"`
		Segments []struct {
			Text       string  `json:"text"`
			AvgLogprob float64 `json:"avg_logprob"`
		} `json:"segments"`
	}
	run := func(args ...string) (result, string) {
		out, stderr, err := runHark(t, append([]string{"transcribe", "--model", model, "--format", "json", "--beam", "1", "--no-fallback"}, append(args, wav)...)...)
		require.NoError(t, err, stderr)
		var r result
		require.NoError(t, json.Unmarshal([]byte(out), &r))
		return r, stderr
	}
	plain, _ := run()
	got, stderr := run("--vocabulary", list)
	// The kit model memorises clips and was never prompted with a
	// glossary: a prompt derails it (README, Vocabulary), which at least
	// shows the terms reach the decoder.
	require.Greater(t, abs(plain.Segments[0].AvgLogprob-got.Segments[0].AvgLogprob), 1e-4, "the vocabulary did not reach the decoder")
	require.NotContains(t, stderr, "did not fit")
	// Without the prompt the text is the plain one, with the "sounds
	// like" replacement applied to the text and the segments.
	require.Contains(t, plain.Text, "my fellow Americans")
	got, _ = run("--vocabulary", list, "--vocabulary-tokens", "0")
	require.Equal(t, strings.Replace(plain.Text, "fellow", "Comrades", 1), got.Text)
	require.Contains(t, got.Segments[0].Text, "my Comrades Americans")
	_, stderr = run("--vocabulary", long)
	require.Contains(t, stderr, "did not fit")
	require.Contains(t, stderr, "Term79")
	require.NotContains(t, stderr, "Term0,")

	_, _, err := runHark(t, "transcribe", "--model", model, "--vocabulary", filepath.Join(dir, "missing.txt"), wav)
	require.Error(t, err)
	_, _, err = runHark(t, "transcribe", "--model", model, "--vocabulary", list, "--vocabulary-tokens", "224", wav)
	require.ErrorContains(t, err, "--vocabulary-tokens")
	_, _, err = runHark(t, "transcribe", "--model", model, "--vocabulary-bias", "2", wav)
	require.ErrorContains(t, err, "--vocabulary-bias needs --vocabulary")
	require.NoError(t, os.WriteFile(list, []byte("= nothing\n"), 0o644))
	_, _, err = runHark(t, "transcribe", "--model", model, "--vocabulary", list, wav)
	require.ErrorContains(t, err, "vocabulary")
}

func abs(x float64) float64 { return max(x, -x) }
