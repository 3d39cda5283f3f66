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

	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/internal/shared"
)

// completionText posts a completion request and returns its text
// (streamed or not).
func completionText(t *testing.T, url, body string) string {
	t.Helper()
	resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	if strings.Contains(body, `"stream":true`) {
		chunks, done := readSSE(t, resp.Body)
		require.True(t, done)
		var text strings.Builder
		for _, c := range chunks {
			for _, ch := range c["choices"].([]any) {
				text.WriteString(ch.(map[string]any)["text"].(string))
			}
		}
		return text.String()
	}
	var r struct {
		Choices []struct {
			Text string `json:"text"`
		} `json:"choices"`
		Usage usage `json:"usage"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	require.Equal(t, 24, r.Usage.CompletionTokens)
	return r.Choices[0].Text
}

// Concurrent completion requests on one model decode together: four that
// queue while the model is held are all in the engine's first step, and
// each answers exactly what it answers alone on a server that runs
// requests one after another (NoBatch): greedy, seeded, streamed.
func TestConcurrentCompletionsBatched(t *testing.T) {
	bodies := []string{
		`{"model":"stories","prompt":"Once upon a time","max_tokens":24,"ignore_eos":true,"temperature":0}`,
		`{"model":"stories","prompt":"The little dog","max_tokens":24,"ignore_eos":true,"temperature":0.8,"seed":5}`,
		`{"model":"stories","prompt":"Lily went to the park","max_tokens":24,"ignore_eos":true,"temperature":0.9,"top_p":0.9,"seed":7,"stream":true}`,
		`{"model":"stories","prompt":"Once upon a time","max_tokens":24,"ignore_eos":true,"temperature":1,"seed":9,"presence_penalty":0.5}`,
	}
	_, alone := startServer(t, Config{NoBatch: true})
	want := make([]string, len(bodies))
	for i, b := range bodies {
		want[i] = completionText(t, alone, b)
	}

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
	got := make([]string, len(bodies))
	var wg sync.WaitGroup
	for i, b := range bodies {
		wg.Go(func() { got[i] = completionText(t, url, b) })
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
	}
	require.Equal(t, len(bodies), eng.Peak(), "every request ran in one step")
}
