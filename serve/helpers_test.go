package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/models"
	"github.com/harkapp/hark/internal/shared"
)

const jfkText = shared.JFKText

// modelsDir is a models folder holding copies of the kit's tiny.en Whisper
// model (as "tiny") and stories260K (as "stories").
func modelsDir(t testing.TB) string {
	dir := t.TempDir()
	cp := func(src, name string) {
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	cp(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"), "tiny.bin")
	cp(shared.Path(t, "models", "stories260K.gguf"), "stories.gguf")
	return dir
}

// startServer serves cfg (its Store set to a fresh models folder) on a
// loopback listener.
func startServer(t testing.TB, cfg Config) (*Server, string) {
	st, err := models.Open(modelsDir(t))
	require.NoError(t, err)
	cfg.Store = st
	s, err := New(cfg)
	require.NoError(t, err)
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); s.Close() })
	return s, hs.URL
}

// postJSON posts body (a string, sent as is) as JSON.
func postJSON(t testing.TB, url, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b
}

// audioForm builds a multipart body with fields and, unless file is nil,
// the file part.
func audioForm(t testing.TB, file []byte, fields ...string) (string, *bytes.Buffer) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i := 0; i+1 < len(fields); i += 2 {
		require.NoError(t, mw.WriteField(fields[i], fields[i+1]))
	}
	if file != nil {
		fw, err := mw.CreateFormFile("file", "clip.wav")
		require.NoError(t, err)
		_, err = fw.Write(file)
		require.NoError(t, err)
	}
	require.NoError(t, mw.Close())
	return mw.FormDataContentType(), &buf
}

func postForm(t testing.TB, url string, file []byte, fields ...string) (int, []byte) {
	t.Helper()
	ct, body := audioForm(t, file, fields...)
	resp, err := http.Post(url, ct, body)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b
}

// requireAPIError checks an error answer: the status and OpenAI's shape
// with a message.
func requireAPIError(t testing.TB, status int, wantStatus int, body []byte) map[string]any {
	t.Helper()
	require.Equal(t, wantStatus, status, "body: %s", body)
	var e struct {
		Error map[string]any `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &e), "body: %s", body)
	require.NotEmpty(t, e.Error["message"], "body: %s", body)
	require.NotEmpty(t, e.Error["type"], "body: %s", body)
	require.Contains(t, e.Error, "param")
	require.Contains(t, e.Error, "code")
	return e.Error
}

// readSSE reads server-sent events up to [DONE], returning the decoded
// chunks; done reports that [DONE] ended the stream.
func readSSE(t testing.TB, r io.Reader) (chunks []map[string]any, done bool) {
	t.Helper()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		require.True(t, ok, "line %q", line)
		if data == "[DONE]" {
			for sc.Scan() {
				require.Empty(t, sc.Text(), "data after [DONE]")
			}
			return chunks, true
		}
		var c map[string]any
		require.NoError(t, json.Unmarshal([]byte(data), &c), "chunk %q", data)
		chunks = append(chunks, c)
	}
	require.NoError(t, sc.Err())
	return chunks, false
}
