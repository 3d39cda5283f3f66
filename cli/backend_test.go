package cli

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// --backend reaches the model loaders: cpu and auto run (auto is the CPU
// off macOS, silently), metal fails here, an unknown name is rejected.
func TestBackendFlag(t *testing.T) {
	model := shared.Path(t, "models", "stories260K.gguf")
	ref, stderr, err := runHark(t, "generate", "--model", model, "--temp", "0", "-n", "8", "--backend", "cpu", "Once")
	require.NoError(t, err)
	require.Empty(t, stderr)
	out, stderr, err := runHark(t, "generate", "--model", model, "--temp", "0", "-n", "8", "Once")
	require.NoError(t, err)
	require.Empty(t, stderr)
	require.Equal(t, ref, out)

	_, _, err = runHark(t, "generate", "--model", model, "--backend", "metal", "Once")
	require.ErrorContains(t, err, "metal")
	_, _, err = runHark(t, "generate", "--model", model, "--backend", "cuda", "Once")
	require.EqualError(t, err, `unknown backend "cuda" (want auto, cpu, metal)`)

	wav := shared.Path(t, "audio", "jfk.wav")
	_, _, err = runHark(t, "transcribe", "--model", shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"), "--backend", "cuda", wav)
	require.ErrorContains(t, err, `unknown backend "cuda"`)
	_, _, err = runHark(t, "bench", "llm", "--model", model, "--backend", "cuda", "--pp", "4", "--tg", "0", "-r", "1")
	require.ErrorContains(t, err, `unknown backend "cuda"`)
	out, _, err = runHark(t, "bench", "llm", "--model", model, "--backend", "cpu", "--pp", "4", "--tg", "0", "-r", "1", "-t", "1")
	require.NoError(t, err)
	require.Contains(t, out, "| CPU | 1 |")
}
