package cli

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// hark quantize reproduces whisper.cpp's q8_0 file of the kit model.
func TestQuantizeWhisper(t *testing.T) {
	src := shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-f16.bin")
	out := filepath.Join(t.TempDir(), "q8.bin")
	_, _, err := runHark(t, "quantize", "--type", "q8_0", src, out)
	require.NoError(t, err)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	want, err := os.ReadFile(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"))
	require.NoError(t, err)
	require.Equal(t, sha256.Sum256(want), sha256.Sum256(got))

	_, _, err = runHark(t, "quantize", "--type", "q6_k", src, filepath.Join(t.TempDir(), "x.bin"))
	require.ErrorContains(t, err, "cannot write")
	_, _, err = runHark(t, "quantize", "--type", "q4_0", out, filepath.Join(t.TempDir(), "x.bin"))
	require.ErrorContains(t, err, "f32 or f16")
	_, _, err = runHark(t, "quantize", "--type", "nope", src, filepath.Join(t.TempDir(), "x.bin"))
	require.Error(t, err)
}
