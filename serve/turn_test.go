package serve

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/internal/shared"
)

// A conversation through /v1/chat/completions gets the tokens the
// runtime's chat turn (chat.Session, as hark chat and the app use it)
// gives the same conversation, turn after turn.
func TestChatTurnIsTheSession(t *testing.T) {
	_, url := startServer(t, Config{})
	rt := runtime.New(runtime.Options{Threads: 2})
	t.Cleanup(rt.Close)
	l, err := rt.LLM(context.Background(), shared.Path(t, "models", "stories260K.gguf"), runtime.Interactive)
	require.NoError(t, err)
	defer l.Release()
	s := l.Session()
	o := llm.GenerateOptions{MaxTokens: 12}

	type msg struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	var conv []msg
	for _, user := range []string{"Once upon a time", " The dog was"} {
		want, err := s.Send(context.Background(), user, o, nil)
		require.NoError(t, err)
		conv = append(conv, msg{"user", user})
		body, err := json.Marshal(map[string]any{"model": "stories", "messages": conv, "max_tokens": 12, "temperature": 0})
		require.NoError(t, err)
		got := chatCall(t, url+"/v1/chat/completions", string(body))
		require.Equal(t, want.Text, got.Choices[0].Message.Content, "after %d messages", len(conv))
		require.Equal(t, len(want.Tokens), got.Usage.CompletionTokens)
		require.Equal(t, want.PromptTokens, got.Usage.PromptTokens)
		conv = append(conv, msg{"assistant", got.Choices[0].Message.Content})
	}
}
