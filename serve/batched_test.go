package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/chat"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/internal/shared"
)

// completionText posts a completion request and returns its text
// (streamed or not) and its usage's prompt tokens (a stream asks for its
// usage chunk).
func completionText(t *testing.T, url, body string) (string, int) {
	t.Helper()
	resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	if strings.Contains(body, `"stream":true`) {
		chunks, done := readSSE(t, resp.Body)
		require.True(t, done)
		var text strings.Builder
		prompt := -1
		for _, c := range chunks {
			for _, ch := range c["choices"].([]any) {
				text.WriteString(ch.(map[string]any)["text"].(string))
			}
			if u, ok := c["usage"].(map[string]any); ok {
				prompt = int(u["prompt_tokens"].(float64))
				require.Equal(t, 24.0, u["completion_tokens"])
			}
		}
		require.GreaterOrEqual(t, prompt, 0, "the stream's usage chunk")
		return text.String(), prompt
	}
	var r struct {
		Choices []struct {
			Text string `json:"text"`
		} `json:"choices"`
		Usage usage `json:"usage"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	require.Equal(t, 24, r.Usage.CompletionTokens)
	return r.Choices[0].Text, r.Usage.PromptTokens
}

// Concurrent completion requests on one model decode together: four that
// queue while the model is held are all in the engine's first step, and
// each answers exactly what it answers alone on a server that runs
// requests one after another (NoBatch): greedy, seeded, streamed, and
// each reports its own prompt's tokens (the prompts differ in length and
// are rendered side by side on the model's one chat session).
func TestConcurrentCompletionsBatched(t *testing.T) {
	bodies := []string{
		`{"model":"stories","prompt":"Once upon a time","max_tokens":24,"ignore_eos":true,"temperature":0}`,
		`{"model":"stories","prompt":"The little dog","max_tokens":24,"ignore_eos":true,"temperature":0.8,"seed":5}`,
		`{"model":"stories","prompt":"Lily went to the park","max_tokens":24,"ignore_eos":true,"temperature":0.9,"top_p":0.9,"seed":7,"stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"stories","prompt":"Once upon a time","max_tokens":24,"ignore_eos":true,"temperature":1,"seed":9,"presence_penalty":0.5}`,
	}
	_, alone := startServer(t, Config{NoBatch: true})
	want, wantPrompt := make([]string, len(bodies)), make([]int, len(bodies))
	for i, b := range bodies {
		want[i], wantPrompt[i] = completionText(t, alone, b)
	}
	require.NotEqual(t, wantPrompt[0], wantPrompt[2], "prompts of different lengths")

	s, url := startServer(t, Config{})
	completionText(t, url, bodies[0]) // loads the model
	ctx := context.Background()
	path, err := s.modelPath("stories", runtime.Chat)
	require.NoError(t, err)
	l, err := s.rt.LLM(ctx, path, runtime.Interactive)
	require.NoError(t, err)
	eng, err := l.Batch()
	require.NoError(t, err)
	require.NotNil(t, eng)
	got, gotPrompt := make([]string, len(bodies)), make([]int, len(bodies))
	var wg sync.WaitGroup
	for i, b := range bodies {
		wg.Go(func() { got[i], gotPrompt[i] = completionText(t, url, b) })
	}
	require.Eventually(t, func() bool {
		for _, in := range s.rt.Loaded() {
			if in.Waiting == len(bodies) {
				return true
			}
		}
		return false
	}, shared.Wait(t, time.Minute), time.Millisecond, "the requests queue for the model")
	l.Release()
	wg.Wait()
	for i := range bodies {
		require.Equal(t, want[i], got[i], "request %d", i)
		require.Equal(t, wantPrompt[i], gotPrompt[i], "request %d's usage.prompt_tokens", i)
	}
	require.Equal(t, len(bodies), eng.Peak(), "every request ran in one step")
}

// A batched request renders its prompt after giving the model back: the
// engine hands the model to waiting requests between its steps, so a
// prompt rendered under the hold (a long one takes milliseconds) would
// stall every stream decoding beside it.
func TestBatchedRendersWithoutTheModel(t *testing.T) {
	s, url := startServer(t, Config{})
	completionText(t, url, `{"model":"stories","prompt":"Once upon a time","max_tokens":24,"ignore_eos":true,"temperature":0}`)
	ctx := context.Background()
	path, err := s.modelPath("stories", runtime.Chat)
	require.NoError(t, err)
	l, err := s.rt.LLM(ctx, path, runtime.Interactive)
	require.NoError(t, err)
	defer l.Release()
	held := func() bool {
		for _, in := range s.rt.Loaded() {
			if in.Path == path {
				return in.InUse
			}
		}
		t.Fatalf("%s is not loaded", path)
		return false
	}
	require.True(t, held(), "the model is held before the turn")
	renderedHeld := true
	g := generation{opts: llm.GenerateOptions{MaxTokens: 4, IgnoreEOS: true},
		prompt: func(cs *chat.Session, _ context.Context) ([]int32, error) {
			renderedHeld = held()
			return cs.CompletePrompt("Once upon a time")
		}}
	s.batched(l, &g)
	require.NotNil(t, g.answer, "the model has a batch engine")
	res, err := g.answer(l.Session(), ctx, g.opts, nil)
	require.NoError(t, err)
	require.Len(t, res.Tokens, 4)
	require.False(t, renderedHeld, "the prompt was rendered while the model was held")
	require.Equal(t, 5, res.PromptTokens, "BOS and the prompt's 4 tokens")
}
