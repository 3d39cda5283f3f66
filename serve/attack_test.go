package serve

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/chat"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/models"
	"github.com/harkapp/hark/internal/shared"
)

// gatedServer runs cfg the way `hark serve` does: Listen, HTTPServer (the
// local gate), Serve.
func gatedServer(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	return gatedServerIn(t, cfg, modelsDir(t))
}

// gatedServerIn is gatedServer on the models folder dir.
func gatedServerIn(t *testing.T, cfg Config, dir string) (*Server, string) {
	t.Helper()
	st, err := models.Open(dir)
	require.NoError(t, err)
	cfg.Store = st
	s, err := New(cfg)
	require.NoError(t, err)
	ln, err := Listen("127.0.0.1:0", cfg.APIKey)
	require.NoError(t, err)
	hs, err := HTTPServer(s, ln)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, hs, ln) }()
	t.Cleanup(func() { cancel(); <-done; s.Close() })
	return s, "http://" + ln.Addr().String()
}

func send(t *testing.T, method, url string, hdr map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// rawPost sends path exactly as written (an unclean path).
func rawPost(t *testing.T, base, path string, hdr map[string]string, body string) string {
	t.Helper()
	addr := strings.TrimPrefix(base, "http://")
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	req := "POST " + path + " HTTP/1.1\r\nConnection: close\r\nContent-Length: " + itoa(len(body)) + "\r\n"
	if _, ok := hdr["Host"]; !ok {
		req += "Host: " + addr + "\r\n"
	}
	for k, v := range hdr {
		req += k + ": " + v + "\r\n"
	}
	_, err = io.WriteString(c, req+"\r\n"+body)
	require.NoError(t, err)
	b, _ := io.ReadAll(c)
	return string(b)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func loadedModels(t *testing.T, s *Server) []string { return s.loaded() }

// TestGateAttacks: what a web page in the user's browser can send to the
// API, directly or after rebinding its domain to 127.0.0.1, is refused
// before any model loads; the server's own clients still work.
func TestGateAttacks(t *testing.T) {
	s, base := gatedServer(t, Config{CORSOrigins: []string{"http://localhost:3000"}})
	port := base[strings.LastIndex(base, ":")+1:]
	chat := `{"model":"stories","messages":[{"role":"user","content":"Once"}],"max_tokens":2}`
	ctype, form := audioForm(t, []byte("RIFF....WAVE"), "model", "tiny")
	attacks := []struct {
		name, path string
		hdr        map[string]string
		body       string
	}{
		{"rebound Host, matching Origin", "/v1/chat/completions", map[string]string{"Host": "rebind.test:" + port, "Origin": "http://rebind.test:" + port, "Content-Type": "application/json"}, chat},
		{"rebound Host, no Origin", "/v1/chat/completions", map[string]string{"Host": "rebind.test:" + port, "Content-Type": "application/json"}, chat},
		{"Origin null", "/v1/chat/completions", map[string]string{"Origin": "null", "Content-Type": "application/json"}, chat},
		{"text/plain from a page", "/v1/chat/completions", map[string]string{"Origin": "http://evil.example", "Content-Type": "text/plain"}, chat},
		{"form post from a page", "/v1/completions", map[string]string{"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}, "model=stories&prompt=x"},
		{"cross-origin multipart", "/v1/audio/transcriptions", map[string]string{"Origin": "http://evil.example", "Content-Type": ctype}, form.String()},
		{"unlisted origin on localhost", "/v1/chat/completions", map[string]string{"Origin": "http://localhost:3001", "Content-Type": "application/json"}, chat},
		{"navigation without Origin", "/v1/chat/completions", map[string]string{"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"}, chat},
	}
	for _, a := range attacks {
		code, body := send(t, "POST", base+a.path, a.hdr, a.body)
		require.Equal(t, http.StatusForbidden, code, "%s: %s", a.name, body)
	}
	// Unclean paths, and the absolute form (GET http://HOST/path), where Go
	// takes the Host from the URL and drops the rebound Host header.
	for _, p := range []string{"//v1/chat/completions", "/x/../v1/chat/completions", "/v1/./chat//completions", base + "/v1/chat/completions"} {
		resp := rawPost(t, base, p, map[string]string{"Host": "rebind.test:" + port, "Origin": "http://rebind.test:" + port, "Content-Type": "application/json"}, chat)
		require.True(t, strings.HasPrefix(resp, "HTTP/1.1 403"), "%s: %s", p, resp)
		resp = rawPost(t, base, p, map[string]string{"Origin": "http://evil.example", "Content-Type": "text/plain"}, chat)
		require.True(t, strings.HasPrefix(resp, "HTTP/1.1 403"), "%s: %s", p, resp)
	}
	resp := rawPost(t, base, base+"/v1/chat/completions", map[string]string{"Host": "rebind.test:" + port, "Content-Type": "application/json"}, chat)
	require.True(t, strings.HasPrefix(resp, "HTTP/1.1 403"), "absolute form: %s", resp)
	require.Contains(t, resp, "absolute-form")
	code, _ := send(t, "OPTIONS", base+"/v1/chat/completions", map[string]string{"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}, "")
	require.Equal(t, http.StatusForbidden, code)
	require.Empty(t, loadedModels(t, s), "an attack loaded a model")

	// The same request from the server's own clients: a listed origin
	// (after its preflight) and a plain client. This is what proves the
	// refusals above were the gate's, not a broken request.
	code, _ = send(t, "OPTIONS", base+"/v1/chat/completions", map[string]string{"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}, "")
	require.Equal(t, http.StatusNoContent, code)
	code, body := send(t, "POST", base+"/v1/chat/completions", map[string]string{"Origin": "http://localhost:3000", "Content-Type": "application/json"}, chat)
	require.Equal(t, http.StatusOK, code, body)
	code, body = send(t, "POST", base+"/x/../v1/chat/completions", map[string]string{"Host": "localhost:" + port, "Content-Type": "application/json"}, chat)
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, []string{"stories"}, loadedModels(t, s))
}

// TestGateAllowHostAndKey: --allow-host adds a name; beyond loopback the
// API key is the protection.
func TestGateAllowHostAndKey(t *testing.T) {
	_, base := gatedServer(t, Config{AllowHosts: []string{"host.docker.internal"}})
	port := base[strings.LastIndex(base, ":")+1:]
	code, _ := send(t, "GET", base+"/v1/models", map[string]string{"Host": "host.docker.internal:" + port}, "")
	require.Equal(t, http.StatusOK, code)
	code, _ = send(t, "GET", base+"/v1/models", map[string]string{"Host": "other.internal:" + port}, "")
	require.Equal(t, http.StatusForbidden, code)
}

func TestReadKeyFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "key")
	require.NoError(t, os.WriteFile(p, []byte("  s3cret \nsecond line\n"), 0o600))
	k, err := ReadKeyFile(p)
	require.NoError(t, err)
	require.Equal(t, "s3cret", k)
	require.NoError(t, os.WriteFile(p, []byte("\n"), 0o600))
	_, err = ReadKeyFile(p)
	require.ErrorContains(t, err, "empty")
	_, err = ReadKeyFile(filepath.Join(dir, "none"))
	require.Error(t, err)

	// Readable or writable by others: refused, as ssh refuses such keys.
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o620} {
		require.NoError(t, os.WriteFile(p, []byte("s3cret\n"), 0o600))
		require.NoError(t, os.Chmod(p, mode))
		_, err = ReadKeyFile(p)
		require.ErrorContains(t, err, "accessible by other users", "%#o", mode)
		require.ErrorContains(t, err, "chmod 600 "+p)
	}
	require.NoError(t, os.Chmod(p, 0o400))
	_, err = ReadKeyFile(p)
	require.NoError(t, err)
}

// TestHugePromptRefusedUntokenized: a prompt that cannot fit the context
// is refused from its length alone (the answer says "at least"), for both
// endpoints; the model still serves the next request.
func TestHugePromptRefusedUntokenized(t *testing.T) {
	_, base := gatedServer(t, Config{MaxBody: 16 << 20})
	big := strings.Repeat("dog ", 7<<20/4) // 7 MB
	for _, c := range []struct{ path, body string }{
		{"/v1/completions", `{"model":"stories","prompt":"` + big + `"}`},
		{"/v1/chat/completions", `{"model":"stories","messages":[{"role":"user","content":"` + big + `"}]}`},
	} {
		code, body := send(t, "POST", base+c.path, map[string]string{"Content-Type": "application/json"}, c.body)
		require.Equal(t, http.StatusBadRequest, code, body)
		require.Contains(t, body, "context_length_exceeded")
		require.Contains(t, body, "at least", "refused before tokenizing")
	}
	code, body := send(t, "POST", base+"/v1/completions", map[string]string{"Content-Type": "application/json"}, `{"model":"stories","prompt":"Once","max_tokens":2}`)
	require.Equal(t, http.StatusOK, code, body)
}

// TestFFmpegPlaylistUpload: an upload that is an HLS playlist or an ffconcat
// list naming a file only the server's user can read is refused with a clear
// error, and nothing of that file comes back; a real video container (MP4
// with its index last) still transcribes.
func TestFFmpegPlaylistUpload(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir) // uploads are saved next to the secrets
	_, base := gatedServer(t, Config{})
	for _, pl := range shared.Playlists(t, dir) {
		code, body := postForm(t, base+"/v1/audio/transcriptions", pl.Data, "model", "tiny")
		e := requireAPIError(t, code, http.StatusBadRequest, []byte(body))
		require.Contains(t, e["message"], "playlist", pl.Name)
		require.NotContains(t, body, "fellow Americans", "%s: the secret was read", pl.Name)
	}
	mp4 := filepath.Join(t.TempDir(), "video.mp4")
	shared.Encode(t, mp4, "-f", "lavfi", "-i", "color=c=black:s=64x48:r=5", "-shortest",
		"-map", "1:v", "-map", "0:a", "-c:v", "mpeg4", "-c:a", "aac", "-b:a", "96k")
	b, err := os.ReadFile(mp4)
	require.NoError(t, err)
	code, body := postForm(t, base+"/v1/audio/transcriptions", b, "model", "tiny", "response_format", "text")
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.Equal(t, jfkText+"\n", string(body))
}

// TestHostileChatTemplate: a model whose chat template nests 100,000
// parentheses (its parsing overflows any stack, a fatal error no recover
// catches) loads with a clear template error instead of killing the
// server: chat is refused, completions and /health keep answering.
func TestHostileChatTemplate(t *testing.T) {
	dir := modelsDir(t)
	deep := "{{ " + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000) + " }}"
	require.NoError(t, gguf.Rewrite(filepath.Join(dir, "stories.gguf"), filepath.Join(dir, "hostile.gguf"),
		map[string]gguf.Value{chat.GGUFKey: gguf.String(deep)}))
	_, base := gatedServerIn(t, Config{}, dir)
	code, body := send(t, "POST", base+"/v1/chat/completions", map[string]string{"Content-Type": "application/json"},
		`{"model":"hostile","messages":[{"role":"user","content":"Once"}],"max_tokens":2}`)
	e := requireAPIError(t, code, http.StatusBadRequest, []byte(body))
	require.Contains(t, e["message"], "nests too deeply")
	code, body = send(t, "GET", base+"/health", nil, "")
	require.Equal(t, http.StatusOK, code, body)
	code, body = send(t, "POST", base+"/v1/completions", map[string]string{"Content-Type": "application/json"},
		`{"model":"hostile","prompt":"Once","max_tokens":2}`)
	require.Equal(t, http.StatusOK, code, body)
}
