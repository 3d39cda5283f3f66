package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/backends/backendstest"
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
	_, _, err = runHark(t, "generate", "--model", model, "--backend", "vulkan", "Once")
	require.EqualError(t, err, `unknown backend "vulkan" (want `+strings.Join(backends.Names(), ", ")+`)`)

	wav := shared.Path(t, "audio", "jfk.wav")
	_, _, err = runHark(t, "transcribe", "--model", shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"), "--backend", "vulkan", wav)
	require.ErrorContains(t, err, `unknown backend "vulkan"`)
	_, _, err = runHark(t, "bench", "llm", "--model", model, "--backend", "vulkan", "--pp", "4", "--tg", "0", "-r", "1")
	require.ErrorContains(t, err, `unknown backend "vulkan"`)
	out, _, err = runHark(t, "bench", "llm", "--model", model, "--backend", "cpu", "--pp", "4", "--tg", "0", "-r", "1", "-t", "1")
	require.NoError(t, err)
	require.Contains(t, out, "| CPU | 1 |")
}

// With a GPU driver present, auto picks it for every command, as it does
// for the app (app's TestAppUsesTheRuntimeBackend).
func TestAutoPicksTheGPU(t *testing.T) {
	gpu := backendstest.FakeGPU(t, backends.Metal)
	model := shared.Path(t, "models", "stories260K.gguf")
	out, _, err := runHark(t, "bench", "llm", "--model", model, "--pp", "4", "--tg", "0", "-r", "1", "-t", "1")
	require.NoError(t, err)
	require.Contains(t, out, "| METAL | 1 |")
	_, _, err = runHark(t, "generate", "--model", model, "--temp", "0", "-n", "4", "Once")
	require.NoError(t, err)
	require.Equal(t, 2, gpu.N())
}

// --gpu reaches the driver (a fake CUDA here) from the loaders and bench;
// a negative index, Metal with an index and CUDA on a machine without a
// GPU give clear errors.
func TestGPUFlag(t *testing.T) {
	model := shared.Path(t, "models", "stories260K.gguf")
	_, _, err := runHark(t, "generate", "--model", model, "--gpu", "-1", "Once")
	require.EqualError(t, err, "--gpu -1: a GPU index is 0 or more")
	_, _, err = runHark(t, "bench", "llm", "--model", model, "--gpu", "-2", "--pp", "4", "--tg", "0", "-r", "1")
	require.EqualError(t, err, "--gpu -2: a GPU index is 0 or more")
	_, _, err = runHark(t, "generate", "--model", model, "--backend", "metal", "--gpu", "1", "Once")
	require.ErrorContains(t, err, "metal: --gpu 1: Metal runs on the system GPU")
	_, _, err = runHark(t, "generate", "--model", model, "--backend", "cuda", "--gpu", "7", "Once")
	require.ErrorContains(t, err, "cuda:") // no driver or no GPU 7 here: the driver's own message

	gpu := backendstest.FakeGPU(t, "cuda")
	_, _, err = runHark(t, "generate", "--model", model, "--backend", "cuda", "--gpu", "2", "--temp", "0", "-n", "4", "Once")
	require.NoError(t, err)
	require.Equal(t, 2, gpu.GPU())
	out, _, err := runHark(t, "bench", "llm", "--model", model, "--gpu", "3", "--pp", "4", "--tg", "0", "-r", "1", "-t", "1")
	require.NoError(t, err)
	require.Contains(t, out, "| CUDA | 1 |")
	require.Equal(t, 3, gpu.GPU())
	require.Equal(t, 2, gpu.N())
}
