package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// Commands' runs called directly with their options, no command line:
// input, output and the models folder come from the options' Env.
func TestRunsDirect(t *testing.T) {
	stories := shared.Path(t, "models", "stories260K.gguf")

	e, out, _ := testEnv(t, "", "")
	require.NoError(t, runTokenize(&TokenizeOptions{Env: e, Model: stories, Text: "Hello world"}))
	require.Equal(t, "[346,306,414,263,304,341]\n", out.String())

	e, out, _ = testEnv(t, "", "")
	o := &GenerateOptions{Env: e, LLMFlags: LLMFlags{Model: stories, N: 8, Seed: 1}, Prompt: "Once upon a time"}
	require.NoError(t, runGenerate(o))
	require.NotEmpty(t, strings.TrimSpace(out.String()), "the continuation")

	// chat reads its turns from In and answers on Out.
	e, out, errOut := testEnv(t, "", "Hello\n/exit\n")
	c := &ChatOptions{Env: e, LLMFlags: LLMFlags{Model: stories, N: 4, Seed: 1}}
	require.NoError(t, runChat(c))
	require.NotEmpty(t, out.String(), "an answer")
	require.Contains(t, errOut.String(), "hark chat: "+stories)

	e, _, _ = testEnv(t, "", "")
	require.ErrorContains(t, runTranscribe(&transcribeOptions{Env: e, speechFlags: speechFlags{model: "no-such-model"}, files: []string{"x.wav"}, beam: 1}),
		`no model called "no-such-model"`)
}
