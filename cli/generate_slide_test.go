package cli

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// At the end of the context generate stops with an error, or with --slide
// drops the older half of the context and carries on.
func TestGenerateAtTheContextLimit(t *testing.T) {
	model := shared.Path(t, "models", "stories260K.gguf")
	args := []string{"generate", "--model", model, "--temp", "0", "--ctx", "32", "-n", "60", "Once upon a time"}
	out, errs, code := runCLI(t, args...)
	require.Equal(t, 1, code)
	require.Contains(t, errs, "end of the context (32 tokens)")
	require.Contains(t, out, ", there was a little girl named Lily.")

	slid, errs, code := runCLI(t, append(args, "--slide")...)
	require.Zero(t, code, errs)
	require.Greater(t, len(slid), len(out))
	require.Contains(t, slid, out[:len(out)-1], "the same text up to the limit")
}
