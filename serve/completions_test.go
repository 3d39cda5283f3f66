package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type chatResponse struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index        int    `json:"index"`
		FinishReason string `json:"finish_reason"`
		Text         string `json:"text"`
		Message      struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage usage `json:"usage"`
}

func chatCall(t testing.TB, url, body string) chatResponse {
	t.Helper()
	st, b := postJSON(t, url, body)
	require.Equal(t, http.StatusOK, st, "%s", b)
	var r chatResponse
	require.NoError(t, json.Unmarshal(b, &r))
	require.Len(t, r.Choices, 1)
	return r
}

// streamText posts a streamed request and returns the concatenated text,
// the finish reason and the chunks.
func streamText(t testing.TB, url, body string) (string, string, []map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	chunks, done := readSSE(t, resp.Body)
	require.True(t, done, "the stream must end with [DONE]")
	var text strings.Builder
	finish := ""
	for _, c := range chunks {
		ch := c["choices"].([]any)
		if len(ch) == 0 {
			continue // the usage chunk
		}
		c0 := ch[0].(map[string]any)
		if d, ok := c0["delta"].(map[string]any); ok {
			if s, ok := d["content"].(string); ok {
				text.WriteString(s)
			}
		} else {
			text.WriteString(c0["text"].(string))
		}
		if f, ok := c0["finish_reason"].(string); ok {
			require.Empty(t, finish, "one finish_reason")
			finish = f
		}
	}
	return text.String(), finish, chunks
}

func TestChatAndCompletions(t *testing.T) {
	_, url := startServer(t, Config{})
	chatURL, cmplURL := url+"/v1/chat/completions", url+"/v1/completions"

	// stories260K has no chat template: the prompt is the plain
	// concatenated text, so the chat answer is the completion of it.
	c := chatCall(t, chatURL, `{"model":"stories","messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":24,"temperature":0}`)
	require.Equal(t, "chat.completion", c.Object)
	require.True(t, strings.HasPrefix(c.ID, "chatcmpl-"))
	require.Equal(t, "stories", c.Model)
	require.NotZero(t, c.Created)
	require.Equal(t, "assistant", c.Choices[0].Message.Role)
	require.Equal(t, "length", c.Choices[0].FinishReason)
	require.Equal(t, 24, c.Usage.CompletionTokens)
	require.Equal(t, c.Usage.PromptTokens+24, c.Usage.TotalTokens)
	answer := c.Choices[0].Message.Content
	require.True(t, strings.HasPrefix(answer, ", there was a"), "%q", answer)

	p := chatCall(t, cmplURL, `{"model":"stories","prompt":"Once upon a time","max_tokens":24,"temperature":0}`)
	require.Equal(t, "text_completion", p.Object)
	require.Equal(t, answer, p.Choices[0].Text)
	require.Equal(t, c.Usage, p.Usage)

	// Content as a list of parts, split over two messages: same prompt.
	c2 := chatCall(t, chatURL, `{"model":"stories","messages":[{"role":"system","content":[{"type":"text","text":"Once upon"}]},{"role":"user","content":" a time"}],"max_tokens":24,"temperature":0}`)
	require.Equal(t, answer, c2.Choices[0].Message.Content)

	// Streamed: the same text in deltas, the role first, then [DONE].
	text, finish, chunks := streamText(t, chatURL, `{"model":"stories","stream":true,"messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":24,"temperature":0,"stream_options":{"include_usage":true}}`)
	require.Equal(t, answer, text)
	require.Equal(t, "length", finish)
	require.Equal(t, "chat.completion.chunk", chunks[0]["object"])
	require.Equal(t, "assistant", chunks[0]["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)["role"])
	require.Greater(t, len(chunks), 10, "token by token")
	u := chunks[len(chunks)-1]["usage"].(map[string]any)
	require.EqualValues(t, 24, u["completion_tokens"])

	text, finish, _ = streamText(t, cmplURL, `{"model":"stories","stream":true,"prompt":"Once upon a time","max_tokens":24,"temperature":0}`)
	require.Equal(t, answer, text)
	require.Equal(t, "length", finish)

	// A stop string cuts the text before it and finishes with "stop".
	cut := strings.Index(answer, " a little")
	require.Greater(t, cut, 0, "%q", answer)
	s := chatCall(t, cmplURL, `{"model":"stories","prompt":"Once upon a time","max_tokens":24,"temperature":0,"stop":[" a little","zzz"]}`)
	require.Equal(t, answer[:cut], s.Choices[0].Text)
	require.Equal(t, "stop", s.Choices[0].FinishReason)
	text, finish, _ = streamText(t, cmplURL, `{"model":"stories","stream":true,"prompt":"Once upon a time","max_tokens":24,"temperature":0,"stop":" a little"}`)
	require.Equal(t, answer[:cut], text)
	require.Equal(t, "stop", finish)

	// Sampling is reproducible with a seed and differs across seeds.
	body := func(seed int) string {
		return `{"model":"stories","prompt":"Once upon a time","max_tokens":40,"temperature":1,"top_p":0.9,"seed":` + string(rune('0'+seed)) + `}`
	}
	a1, a2, b1 := chatCall(t, cmplURL, body(1)), chatCall(t, cmplURL, body(1)), chatCall(t, cmplURL, body(2))
	require.Equal(t, a1.Choices[0].Text, a2.Choices[0].Text)
	require.NotEqual(t, a1.Choices[0].Text, b1.Choices[0].Text)

	// max_tokens defaults to 16 on /v1/completions.
	d := chatCall(t, cmplURL, `{"model":"stories","prompt":"Once upon a time","temperature":0}`)
	require.Equal(t, 16, d.Usage.CompletionTokens)
}

// A client leaving mid-stream stops generation and leaves the model
// usable: the next answer is the right one.
func TestStreamDisconnect(t *testing.T) {
	_, url := startServer(t, Config{})
	want := chatCall(t, url+"/v1/completions", `{"model":"stories","prompt":"Once upon a time","max_tokens":24,"temperature":0}`).Choices[0].Text
	for range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/completions",
			bytes.NewReader([]byte(`{"model":"stories","prompt":"The dog","max_tokens":100000,"temperature":0.8,"stream":true}`)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		buf := make([]byte, 64)
		_, err = resp.Body.Read(buf)
		require.NoError(t, err)
		cancel()
		resp.Body.Close()
	}
	start := time.Now()
	got := chatCall(t, url+"/v1/completions", `{"model":"stories","prompt":"Once upon a time","max_tokens":24,"temperature":0}`).Choices[0].Text
	require.Equal(t, want, got)
	require.Less(t, time.Since(start), 20*time.Second, "generation for the departed clients must have stopped")
}
