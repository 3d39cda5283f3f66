package serve

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

func TestErrorAnswers(t *testing.T) {
	_, url := startServer(t, Config{MaxBody: 4096, MaxUpload: 512 << 10})
	wav, err := os.ReadFile(shared.Path(t, "audio", "jfk.wav")) // 344 KiB: under the limit
	require.NoError(t, err)
	chatURL, cmplURL, trURL := url+"/v1/chat/completions", url+"/v1/completions", url+"/v1/audio/transcriptions"
	msgs := `"messages":[{"role":"user","content":"hi"}]`

	jsonCases := []struct {
		name, url, body string
		status          int
		param           string
	}{
		{"malformed", chatURL, `{"model":"stories",`, 400, ""},
		{"not an object", chatURL, `[1,2]`, 400, ""},
		{"empty body", chatURL, ``, 400, ""},
		{"two values", chatURL, `{"model":"stories",` + msgs + `} {}`, 400, ""},
		{"wrong type", chatURL, `{"model":"stories","messages":"hi"}`, 400, "messages"},
		{"nested wrong type", chatURL, `{"model":"stories","messages":[{"role":5,"content":"x"}]}`, 400, "messages"},
		{"integer wanted", chatURL, `{"model":"stories",` + msgs + `,"max_tokens":"many"}`, 400, "max_tokens"},
		{"no model", chatURL, `{` + msgs + `}`, 400, "model"},
		{"no messages", chatURL, `{"model":"stories","messages":[]}`, 400, "messages"},
		{"bad role", chatURL, `{"model":"stories","messages":[{"role":"robot","content":"x"}]}`, 400, "messages[0].role"},
		{"image part", chatURL, `{"model":"stories","messages":[{"role":"user","content":[{"type":"image_url"}]}]}`, 400, ""},
		{"temperature", chatURL, `{"model":"stories",` + msgs + `,"temperature":3}`, 400, "temperature"},
		{"top_p", chatURL, `{"model":"stories",` + msgs + `,"top_p":0}`, 400, "top_p"},
		{"max_tokens", chatURL, `{"model":"stories",` + msgs + `,"max_tokens":0}`, 400, "max_tokens"},
		{"n", chatURL, `{"model":"stories",` + msgs + `,"n":2}`, 400, "n"},
		{"stop type", chatURL, `{"model":"stories",` + msgs + `,"stop":5}`, 400, ""},
		{"five stops", chatURL, `{"model":"stories",` + msgs + `,"stop":["a","b","c","d","e"]}`, 400, "stop"},
		{"speech model for chat", chatURL, `{"model":"tiny",` + msgs + `}`, 400, "model"},
		{"prompt type", cmplURL, `{"model":"stories","prompt":{"a":1}}`, 400, "prompt"},
		{"too long for the context", cmplURL, `{"model":"stories","prompt":"` + strings.Repeat("dog ", 900) + `"}`, 400, "prompt"},
		{"presence_penalty", chatURL, `{"model":"stories",` + msgs + `,"presence_penalty":2.5}`, 400, "presence_penalty"},
		{"frequency_penalty", cmplURL, `{"model":"stories","prompt":"x","frequency_penalty":-3}`, 400, "frequency_penalty"},
		{"logit_bias key", chatURL, `{"model":"stories",` + msgs + `,"logit_bias":{"dog":1}}`, 400, "logit_bias"},
		{"logit_bias value", chatURL, `{"model":"stories",` + msgs + `,"logit_bias":{"5":101}}`, 400, "logit_bias"},
		{"logit_bias outside the vocabulary", cmplURL, `{"model":"stories","prompt":"x","logit_bias":{"512":1}}`, 400, "logit_bias"},
		{"top_logprobs", chatURL, `{"model":"stories",` + msgs + `,"logprobs":true,"top_logprobs":21}`, 400, "top_logprobs"},
		{"top_logprobs without logprobs", chatURL, `{"model":"stories",` + msgs + `,"top_logprobs":2}`, 400, "top_logprobs"},
		{"legacy logprobs", cmplURL, `{"model":"stories","prompt":"x","logprobs":6}`, 400, "logprobs"},
		{"tools", chatURL, `{"model":"stories",` + msgs + `,"tools":[{"type":"function","function":{"name":"f"}}]}`, 400, "tools"},
		{"tool_choice", chatURL, `{"model":"stories",` + msgs + `,"tool_choice":"required"}`, 400, "tool_choice"},
		{"functions", chatURL, `{"model":"stories",` + msgs + `,"functions":[{"name":"f"}]}`, 400, "functions"},
		{"response_format", chatURL, `{"model":"stories",` + msgs + `,"response_format":{"type":"json_object"}}`, 400, "response_format"},
		{"audio", chatURL, `{"model":"stories",` + msgs + `,"audio":{"voice":"alloy","format":"wav"}}`, 400, "audio"},
		{"modalities", chatURL, `{"model":"stories",` + msgs + `,"modalities":["text","audio"]}`, 400, "modalities"},
		{"prediction", chatURL, `{"model":"stories",` + msgs + `,"prediction":{"type":"content","content":"x"}}`, 400, "prediction"},
		{"echo", cmplURL, `{"model":"stories","prompt":"x","echo":true}`, 400, "echo"},
		{"suffix", cmplURL, `{"model":"stories","prompt":"x","suffix":"end"}`, 400, "suffix"},
		{"best_of", cmplURL, `{"model":"stories","prompt":"x","best_of":3}`, 400, "best_of"},
		{"too long, streamed", chatURL, `{"model":"stories","stream":true,"messages":[{"role":"user","content":"` + strings.Repeat("dog ", 900) + `"}]}`, 400, "messages"},
		{"unknown model", chatURL, `{"model":"gpt-4",` + msgs + `}`, 404, "model"},
		{"invalid model name", cmplURL, `{"model":"../etc/passwd","prompt":"x"}`, 404, "model"},
		{"body over the limit", chatURL, `{"model":"stories","messages":[{"role":"user","content":"` + strings.Repeat("a", 5000) + `"}]}`, 413, ""},
	}
	for _, c := range jsonCases {
		st, b := postJSON(t, c.url, c.body)
		e := requireAPIError(t, st, c.status, b)
		if c.param != "" {
			require.Equal(t, c.param, e["param"], c.name)
		}
		noInternals(t, c.name, e)
	}

	// 415: wrong content types.
	resp, err := http.Post(chatURL, "text/plain", strings.NewReader(`{"model":"stories",`+msgs+`}`))
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	requireAPIError(t, resp.StatusCode, 415, b)
	req, _ := http.NewRequest("POST", cmplURL, strings.NewReader(`{"model":"stories","prompt":"x"}`))
	resp, err = http.DefaultClient.Do(req) // no Content-Type at all
	require.NoError(t, err)
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	requireAPIError(t, resp.StatusCode, 415, b)
	st, b := postJSON(t, trURL, `{"model":"tiny"}`)
	requireAPIError(t, st, 415, b)

	// Audio form errors.
	formCases := []struct {
		name   string
		file   []byte
		fields []string
		status int
		param  string
	}{
		{"no file", nil, []string{"model", "tiny"}, 400, "file"},
		{"no model", wav, nil, 400, "model"},
		{"format", wav, []string{"model", "tiny", "response_format", "docx"}, 400, "response_format"},
		{"temperature", wav, []string{"model", "tiny", "temperature", "hot"}, 400, "temperature"},
		{"granularity", wav, []string{"model", "tiny", "timestamp_granularities[]", "char"}, 400, "timestamp_granularities"},
		{"not audio", []byte("this is not a sound file at all"), []string{"model", "tiny"}, 400, "file"},
		{"chat model", wav, []string{"model", "stories"}, 400, "model"},
		{"unknown model", wav, []string{"model", "whisper-1"}, 404, "model"},
		{"too large", bytes.Repeat(wav, 2), []string{"model", "tiny"}, 413, "file"},
	}
	for _, c := range formCases {
		st, b := postForm(t, trURL, c.file, c.fields...)
		e := requireAPIError(t, st, c.status, b)
		require.Equal(t, c.param, e["param"], c.name)
		noInternals(t, c.name, e)
	}
	// English-only models do not translate.
	st, b = postForm(t, url+"/v1/audio/translations", wav, "model", "tiny")
	e := requireAPIError(t, st, 400, b)
	require.Contains(t, e["message"], "multilingual")
	// A multipart body that breaks off.
	resp, err = http.Post(trURL, "multipart/form-data; boundary=xyz", strings.NewReader("--xyz\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\ntiny"))
	require.NoError(t, err)
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	requireAPIError(t, resp.StatusCode, 400, b)

	// Informational fields, fields set to what asks for nothing, and
	// fields this server does not know are accepted.
	for _, c := range []struct{ url, body string }{
		{chatURL, `{"model":"stories",` + msgs + `,"max_tokens":2,"user":"u","metadata":{"k":"v"},"store":false,"service_tier":"auto",` +
			`"parallel_tool_calls":true,"stream_options":{"include_usage":true},"response_format":{"type": "text"},"modalities":["text"],` +
			`"tools":[],"tool_choice":"none","n":1,"logprobs":false,"top_logprobs":0,"some_future_field":{"x":1}}`},
		{cmplURL, `{"model":"stories","prompt":"x","max_tokens":2,"echo":false,"suffix":"","best_of":1,"user":"u","some_future_field":1}`},
	} {
		st, b := postJSON(t, c.url, c.body)
		require.Equal(t, http.StatusOK, st, "%s", b)
	}

	// Routes and methods.
	resp, err = http.Get(url + "/v1/engines")
	require.NoError(t, err)
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	requireAPIError(t, resp.StatusCode, 404, b)
	resp, err = http.Get(chatURL)
	require.NoError(t, err)
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	requireAPIError(t, resp.StatusCode, 405, b)
	require.Equal(t, "POST", resp.Header.Get("Allow"))
}

// noInternals: an error names the client's fields and JSON kinds, never a
// Go type, a nested Go field path or a server-side file.
func noInternals(t *testing.T, name string, e map[string]any) {
	t.Helper()
	msg, _ := e["message"].(string)
	param, _ := e["param"].(string)
	for _, bad := range []string{"Go ", "[]", "struct", "serve.", "*", "int64", "float64", os.TempDir(), "hark-upload"} {
		require.NotContains(t, msg, bad, "%s: %s", name, msg)
	}
	// OpenAI's own nested form (messages[0].role) is fine; Go's path
	// (messages.content, genParams.max_tokens) is not.
	require.NotRegexp(t, `[^\]]\.`, param, "%s: Go field path as param", name)
}
