package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// Commands that take --model accept the name of a model in the models
// folder (--models-dir or HARK_MODELS), as well as a file path.
func TestModelNames(t *testing.T) {
	dir := t.TempDir()
	whisperModel, err := filepath.Abs(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"))
	require.NoError(t, err)
	stories, err := filepath.Abs(shared.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)
	// The store lists regular files only; copy rather than link.
	for name, src := range map[string]string{"kit-tiny.en.bin": whisperModel, "stories.gguf": stories} {
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	jfk := shared.Path(t, "audio", "jfk.wav")

	out, errs, code := runCLI(t, "transcribe", "--models-dir", dir, "--model", "kit-tiny.en", "--beam", "1", jfk)
	require.Zero(t, code, errs)
	require.Contains(t, out, "And so my fellow Americans")

	t.Setenv("HARK_MODELS", dir)
	out, errs, code = runCLI(t, "generate", "--model", "stories", "--temp", "0", "-n", "8", "Once upon a time")
	require.Zero(t, code, errs)
	require.Contains(t, out, ", there was a little girl")
	out, errs, code = runCLI(t, "tokenize", "--model", "stories", "Once")
	require.Zero(t, code, errs)
	require.Contains(t, out, "[")

	_, errs, code = runCLI(t, "generate", "--model", "nope", "x")
	require.Equal(t, 1, code)
	require.Contains(t, errs, `no model called "nope"`)
	_, errs, code = runCLI(t, "generate", "--model", "../stories", "x")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "../stories: no such model file")
}
