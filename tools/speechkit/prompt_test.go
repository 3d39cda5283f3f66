package speechkit

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// The training's previous-text prompts take the layout a long-form
// transcription feeds back, timestamps included (prompt.py's check).
func TestTimedPreviousPrompt(t *testing.T) {
	out, err := exec.Command("python3", "prompt.py").CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "checked on 200 random prompts")
}
