package serve

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// The official openai npm client (pinned in testdata/openai-client, which
// scripts/setup installs with npm ci) lists the models, transcribes a kit
// clip to its reference text, streams a chat completion and gets a 404 for
// an unknown model from a real server.
func TestOfficialOpenAIClient(t *testing.T) {
	node, err := exec.LookPath("node")
	require.NoError(t, err, "node is needed for the openai client test (scripts/setup installs it)")
	dir, err := filepath.Abs(filepath.Join("testdata", "openai-client"))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json"))
	require.NoError(t, err, "the openai package is not installed: run scripts/setup (npm ci in %s)", dir)

	_, url := startServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs", url, shared.Path(t, "audio", "jfk.wav"), "tiny", "stories")
	cmd.Dir = dir
	out, err := cmd.Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "node client.mjs: %s", stderr)

	var got struct {
		Models        []string `json:"models"`
		Transcription string   `json:"transcription"`
		Chunks        int      `json:"chunks"`
		Chat          string   `json:"chat"`
		UnknownModel  struct {
			Status  int    `json:"status"`
			Message string `json:"message"`
		} `json:"unknownModel"`
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	require.ElementsMatch(t, []string{"tiny", "stories"}, got.Models)
	require.Equal(t, jfkText, got.Transcription)
	require.Greater(t, got.Chunks, 2, "streamed in several chunks")
	require.Contains(t, got.Chat, "there was a little girl named Lily")
	require.Equal(t, 404, got.UnknownModel.Status)
	require.Contains(t, got.UnknownModel.Message, "no-such-model")
}
