package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

// TestGenerateGolden: `hark generate --temp 0` prints llama.cpp's greedy
// continuation of the golden prompts (and only the continuation).
func TestGenerateGolden(t *testing.T) {
	gold := shared.LoadStoriesGolden(t)
	model := shared.Path(t, "models", "stories260K.gguf")
	for _, i := range []int{2, 4} { // a prompt, and the empty prompt
		r := gold.Results[i]
		out, _, err := runHark(t, "generate", "--model", model, "--temp", "0", "-n", "64", r.Prompt)
		require.NoError(t, err)
		require.Equal(t, r.GeneratedText+"\n", out, "prompt %q", r.Prompt)
	}
	// Sampling with a seed reproduces.
	a, _, err := runHark(t, "generate", "--model", model, "--seed", "7", "-n", "20", "--top-k", "20", "--repeat-penalty", "1.1", "Once")
	require.NoError(t, err)
	c, _, err := runHark(t, "generate", "--model", model, "--seed", "7", "-n", "20", "--top-k", "20", "--repeat-penalty", "1.1", "Once")
	require.NoError(t, err)
	require.Equal(t, a, c)
	require.NotEmpty(t, strings.TrimSpace(a))
}

func TestGenerateErrors(t *testing.T) {
	model := shared.Path(t, "models", "stories260K.gguf")
	_, _, err := runHark(t, "generate", "--model", model, "--ctx", "8", "Once upon a time, there was a little girl named Lily")
	require.ErrorContains(t, err, "longer than the context of 8")

	path := filepath.Join(t.TempDir(), "gemma.gguf")
	fh, err := os.Create(path)
	require.NoError(t, err)
	w := gguf.NewWriter(fh)
	require.NoError(t, w.AddKV("general.architecture", gguf.String("gemma2")))
	require.NoError(t, w.Close())
	require.NoError(t, fh.Close())
	_, _, err = runHark(t, "generate", "--model", path, "hi")
	require.ErrorContains(t, err, `architecture "gemma2" is not supported`)

	_, _, err = runHark(t, "generate", "hi")
	require.ErrorContains(t, err, "--model")
}
