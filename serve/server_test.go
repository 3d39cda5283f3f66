package serve

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

func TestHealthModelsAndAuth(t *testing.T) {
	_, url := startServer(t, Config{APIKey: "sekret"})

	resp, err := http.Get(url + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "/health needs no key")

	resp, err = http.Get(url + "/v1/models")
	require.NoError(t, err)
	var body []byte
	body, _ = readAll(resp)
	e := requireAPIError(t, resp.StatusCode, http.StatusUnauthorized, body)
	require.Equal(t, "invalid_api_key", e["code"])

	get := func(path, key string) (int, []byte) {
		req, _ := http.NewRequest("GET", url+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, _ := readAll(resp)
		return resp.StatusCode, b
	}
	st, b := get("/v1/models", "wrong")
	requireAPIError(t, st, http.StatusUnauthorized, b)

	st, b = get("/v1/models", "sekret")
	require.Equal(t, http.StatusOK, st, "%s", b)
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID     string `json:"id"`
			Object string `json:"object"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(b, &list))
	require.Equal(t, "list", list.Object)
	var ids []string
	for _, m := range list.Data {
		require.Equal(t, "model", m.Object)
		ids = append(ids, m.ID)
	}
	sort.Strings(ids)
	require.Equal(t, []string{"stories", "tiny"}, ids)

	st, b = get("/v1/models/tiny", "sekret")
	require.Equal(t, http.StatusOK, st)
	require.Contains(t, string(b), `"id":"tiny"`)
	st, b = get("/v1/models/nope", "sekret")
	requireAPIError(t, st, http.StatusNotFound, b)
}

func TestListenNeedsKeyOffLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:0": true, "localhost:80": true, "[::1]:0": true,
		"0.0.0.0:8089": false, ":8089": false, "192.168.1.4:1": false, "example.com:80": false} {
		got, err := IsLoopback(addr)
		require.NoError(t, err, addr)
		require.Equal(t, want, got, addr)
	}
	_, err := IsLoopback("no-port")
	require.Error(t, err)
	// Refused before anything is bound.
	_, err = Listen("0.0.0.0:0", "")
	require.ErrorContains(t, err, "API key")
	_, err = Listen(":0", "")
	require.ErrorContains(t, err, "API key")
	ln, err := Listen("127.0.0.1:0", "")
	require.NoError(t, err)
	ln.Close()
}

func TestTranscriptionFormats(t *testing.T) {
	_, url := startServer(t, Config{})
	wav, err := os.ReadFile(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	post := func(fields ...string) string {
		st, b := postForm(t, url+"/v1/audio/transcriptions", wav, append([]string{"model", "tiny"}, fields...)...)
		require.Equal(t, http.StatusOK, st, "%s", b)
		return string(b)
	}

	var js struct{ Text string }
	require.NoError(t, json.Unmarshal([]byte(post()), &js))
	require.Equal(t, jfkText, js.Text)

	require.Equal(t, jfkText+"\n", post("response_format", "text", "language", "en", "temperature", "0"))
	require.Equal(t, "1\n00:00:00,000 --> 00:00:11,000\n"+jfkText+"\n\n", post("response_format", "srt"))
	require.Equal(t, "WEBVTT\n\n00:00.000 --> 00:11.000\n"+jfkText+"\n\n", post("response_format", "vtt"))

	var vj struct {
		Task     string  `json:"task"`
		Language string  `json:"language"`
		Duration float64 `json:"duration"`
		Text     string  `json:"text"`
		Segments []struct {
			ID     int     `json:"id"`
			Start  float64 `json:"start"`
			End    float64 `json:"end"`
			Text   string  `json:"text"`
			Tokens []int32 `json:"tokens"`
		} `json:"segments"`
		Words []struct {
			Word       string
			Start, End float64
		} `json:"words"`
	}
	require.NoError(t, json.Unmarshal([]byte(post("response_format", "verbose_json",
		"timestamp_granularities[]", "word", "timestamp_granularities[]", "segment")), &vj))
	require.Equal(t, "transcribe", vj.Task)
	require.Equal(t, "english", vj.Language)
	require.InDelta(t, 11.0, vj.Duration, 0.01) // jfk.wav is 11 s
	require.Equal(t, jfkText, vj.Text)
	require.Len(t, vj.Segments, 1)
	require.Equal(t, jfkText, strings.TrimSpace(vj.Segments[0].Text))
	require.NotEmpty(t, vj.Segments[0].Tokens)
	var words []string
	last := 0.0
	for _, w := range vj.Words {
		words = append(words, w.Word)
		require.GreaterOrEqual(t, w.Start, last)
		require.GreaterOrEqual(t, w.End, w.Start)
		last = w.Start
	}
	require.Equal(t, strings.Fields(jfkText), words)
	require.Less(t, last, 11.0)
}

func readAll(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

func TestIdleUnloadAndTimeout(t *testing.T) {
	s, url := startServer(t, Config{IdleUnload: 100 * time.Millisecond})
	st, b := postJSON(t, url+"/v1/completions", `{"model":"stories","prompt":"Once","max_tokens":3,"temperature":0}`)
	require.Equal(t, http.StatusOK, st, "%s", b)
	require.Eventually(t, func() bool { return len(s.loaded()) == 0 }, shared.Wait(t, 5*time.Second), 20*time.Millisecond)
	// Loaded again on demand.
	st, b = postJSON(t, url+"/v1/completions", `{"model":"stories","prompt":"Once","max_tokens":3,"temperature":0}`)
	require.Equal(t, http.StatusOK, st, "%s", b)

	_, url = startServer(t, Config{RequestTimeout: time.Millisecond})
	st, b = postJSON(t, url+"/v1/completions", `{"model":"stories","prompt":"Once","max_tokens":200,"temperature":0}`)
	requireAPIError(t, st, http.StatusGatewayTimeout, b)
}
