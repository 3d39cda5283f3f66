package serve

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// The official openai npm client (pinned in testdata/openai-client, which
// scripts/setup installs with npm ci) lists the models, transcribes a kit
// clip to its reference text, streams a chat completion, reads logprobs
// (chat and completions, streamed and not), biases and penalizes tokens,
// sends informational fields, is refused tools naming the field, and gets
// a 404 for an unknown model from a real server.
func TestOfficialOpenAIClient(t *testing.T) {
	node, err := exec.LookPath("node")
	require.NoError(t, err, "node is needed for the openai client test (scripts/setup installs it)")
	dir, err := filepath.Abs(filepath.Join("testdata", "openai-client"))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json"))
	require.NoError(t, err, "the openai package is not installed: run scripts/setup (npm ci in %s)", dir)

	_, url := startServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), shared.Wait(t, 3*time.Minute))
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
		Logprobs struct {
			Content     string
			Tokens      []string
			Logprobs    []float64
			Top         [][]string
			TopLogprobs [][]float64
		}
		StreamLogprobs struct {
			Content string
			Tokens  []string
			Usage   *struct {
				PromptTokens     int `json:"prompt_tokens"`
				CompletionTokens int `json:"completion_tokens"`
			}
		}
		Completions struct {
			Text    string
			Tokens  []string
			Top     []int
			Offsets []int
		}
		Boosted struct {
			Text   string
			Tokens []string
		}
		Penalized string
		Tools     struct {
			Status  int
			Param   string
			Message string
		}
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	require.ElementsMatch(t, []string{"tiny", "stories"}, got.Models)
	require.Equal(t, jfkText, got.Transcription)
	require.Greater(t, got.Chunks, 2, "streamed in several chunks")
	require.Contains(t, got.Chat, "there was a little girl named Lily")

	// Chat logprobs: one per token of the answer, which they spell; at
	// temperature 0 each token is the most likely of its top 3.
	lp := got.Logprobs
	require.Equal(t, lp.Content, strings.Join(lp.Tokens, ""))
	require.NotEmpty(t, lp.Tokens)
	for i := range lp.Tokens {
		require.Len(t, lp.Top[i], 3, "token %d", i)
		require.Equal(t, lp.Tokens[i], lp.Top[i][0], "token %d is its position's most likely", i)
		require.Equal(t, lp.Logprobs[i], lp.TopLogprobs[i][0])
		require.LessOrEqual(t, lp.Logprobs[i], 0.0)
		require.GreaterOrEqual(t, lp.TopLogprobs[i][0], lp.TopLogprobs[i][1])
	}
	// Streamed: the chunks' logprobs spell the streamed text, the same
	// answer; the usage chunk counts its tokens.
	require.Equal(t, lp.Content, got.StreamLogprobs.Content)
	require.Equal(t, lp.Tokens, got.StreamLogprobs.Tokens)
	require.NotNil(t, got.StreamLogprobs.Usage)
	require.Positive(t, got.StreamLogprobs.Usage.PromptTokens)
	require.GreaterOrEqual(t, got.StreamLogprobs.Usage.CompletionTokens, len(lp.Tokens))

	// Completions' legacy logprobs: tokens spelling the text, 2 top
	// entries each, offsets from the prompt's start.
	c := got.Completions
	require.Equal(t, c.Text, strings.Join(c.Tokens, ""))
	require.Len(t, c.Offsets, len(c.Tokens))
	require.Equal(t, len("Once upon a time"), c.Offsets[0])
	for i, n := range c.Top {
		require.Equal(t, 2, n, "token %d", i)
	}
	// logit_bias +100 on one id: every token is that one.
	require.Len(t, got.Boosted.Tokens, 6)
	for _, tk := range got.Boosted.Tokens {
		require.Equal(t, got.Boosted.Tokens[0], tk)
	}
	require.NotEqual(t, c.Text[:len(got.Boosted.Text)], got.Boosted.Text)
	// The penalties change a story model's repetitive text.
	require.NotEqual(t, c.Text, got.Penalized)
	require.NotEmpty(t, got.Penalized)

	require.Equal(t, 400, got.Tools.Status)
	require.Equal(t, "tools", got.Tools.Param)
	require.Contains(t, got.Tools.Message, "tools is not supported")
	require.Equal(t, 404, got.UnknownModel.Status)
	require.Contains(t, got.UnknownModel.Message, "no-such-model")
}
