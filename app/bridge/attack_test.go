package bridge

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app"
)

// uiServer runs a real app behind the bridge on a loopback listener, as
// `hark ui` does, and returns its base URL, its token and a client that
// holds the session cookie.
func uiServer(t *testing.T) (*app.App, string, string, *http.Client) {
	t.Helper()
	b := New(Options{})
	a, err := app.New(app.Config{DataDir: t.TempDir(), ModelsDir: t.TempDir(), Emitter: b})
	require.NoError(t, err)
	require.NoError(t, b.Attach(a))
	t.Cleanup(func() { a.Close() })
	base, tok, c := tcpServer(t, b)
	return a, base, tok, c
}

// tcpServer serves b as `hark ui` does and returns its base URL, its token
// and a client holding the session cookie.
func tcpServer(t *testing.T, b *Bridge) (string, string, *http.Client) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv, url, err := b.TCP(ln, nil)
	require.NoError(t, err)
	go srv.Serve(ln)
	t.Cleanup(func() { b.Close(); srv.Close() })
	base, tok, ok := strings.Cut(url, "/?token=")
	require.True(t, ok, url)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(url)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "past the gate (no pages are served here)")
	require.Len(t, jar.Cookies(resp.Request.URL), 1)
	return base, tok, c
}

func req(t *testing.T, c *http.Client, method, url string, hdr map[string]string, body string) (int, string) {
	t.Helper()
	r, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range hdr {
		if k == "Host" {
			r.Host = v
		} else {
			r.Header.Set(k, v)
		}
	}
	resp, err := c.Do(r)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestUIAttacks replays what a web page can send to `hark ui`: Ollama's
// CVE-2024-28224 shape (rebound Host with a matching Origin), Origin null,
// simple cross-origin posts, a missing or wrong token, unclean paths, and
// reading a file through Transcription.Add + /media. All are refused and
// nothing happens: no setting changes, no item, no server, no file read.
func TestUIAttacks(t *testing.T) {
	a, base, tok, c := uiServer(t)
	port := base[strings.LastIndex(base, ":")+1:]
	secret := filepath.Join(t.TempDir(), "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("TOP-SECRET"), 0o600))
	before, err := a.Settings.Get()
	require.NoError(t, err)
	changed := before
	changed.Theme = "dark"
	changed.ServerAutoStart = true
	settings, _ := json.Marshal([]any{changed})
	addSecret, _ := json.Marshal([]string{secret, ""})
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	fw, _ := mw.CreateFormFile("file", "x.wav")
	fw.Write([]byte("RIFF"))
	mw.Close()

	rebind := map[string]string{"Host": "rebind.test:" + port, "Origin": "http://rebind.test:" + port, "Content-Type": "application/json"}
	calls := []struct {
		path, body string
	}{
		{"/api/call/Settings.Update", string(settings)},
		{"/api/call/Transcription.Add", string(addSecret)},
		{"/api/call/Server.Start", `[""]`},
		{"/api/call/History.List", `["",10,0]`},
	}
	plain := &http.Client{} // no cookie: what a cross-site page has
	for _, cl := range calls {
		for _, at := range []struct {
			name string
			c    *http.Client
			hdr  map[string]string
			url  string
		}{
			{"rebound Host, matching Origin", c, rebind, base + cl.path},
			{"rebound Host, no cookie", plain, rebind, base + cl.path},
			{"Origin null", c, map[string]string{"Origin": "null", "Content-Type": "application/json"}, base + cl.path},
			{"text/plain from a page", c, map[string]string{"Origin": "http://evil.example", "Content-Type": "text/plain"}, base + cl.path},
			{"form post from a page", c, map[string]string{"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}, base + cl.path},
			{"no token", plain, map[string]string{"Content-Type": "application/json"}, base + cl.path},
			{"wrong token", plain, map[string]string{"Cookie": "hark_token_" + port + "=" + strings.Repeat("A", len(tok)), "Content-Type": "application/json"}, base + cl.path},
			{"token in a POST URL", plain, map[string]string{"Content-Type": "application/json"}, base + cl.path + "?token=" + tok},
		} {
			code, body := req(t, at.c, "POST", at.url, at.hdr, cl.body)
			require.Equal(t, http.StatusForbidden, code, "%s %s: %s", at.name, cl.path, body)
		}
	}
	code, body := req(t, c, "POST", base+"/api/upload", map[string]string{"Origin": "http://evil.example", "Content-Type": mw.FormDataContentType()}, form.String())
	require.Equal(t, http.StatusForbidden, code, body)
	for _, p := range []string{"//api/call/Settings.Update", "/x/../api/call/Settings.Update", "/api/./call//Settings.Update", base + "/api/call/Settings.Update"} {
		for _, h := range []map[string]string{rebind, {"Origin": "null"}} {
			raw := rawPost(t, base, p, h, string(settings))
			require.True(t, strings.HasPrefix(raw, "HTTP/1.1 403"), "%s %v: %s", p, h, raw)
		}
	}
	raw := rawPost(t, base, base+"/api/call/Settings.Update", map[string]string{"Host": "rebind.test:" + port, "Cookie": "hark_token_" + port + "=" + tok}, string(settings))
	require.True(t, strings.HasPrefix(raw, "HTTP/1.1 403"), "absolute form: %s", raw)
	require.Contains(t, raw, "absolute-form")

	after, err := a.Settings.Get()
	require.NoError(t, err)
	require.Equal(t, before, after, "an attack changed the settings")
	st, _ := a.Server.Status()
	require.False(t, st.Running, "an attack started the API server")
	items, err := a.History.List("", 10, 0)
	require.NoError(t, err)
	require.Empty(t, items, "an attack created an item")

	// Even the UI's own page cannot name a file: the read-any-file chain
	// (Transcription.Add of a path, then /media) is closed.
	code, body = req(t, c, "POST", base+"/api/call/Transcription.Add", map[string]string{"Origin": base, "Content-Type": "application/json"}, string(addSecret))
	require.Equal(t, 200, code)
	require.Contains(t, body, "not by path")
	code, body = req(t, c, "GET", base+"/media/recording/1", nil, "")
	require.Equal(t, http.StatusNotFound, code)
	require.NotContains(t, body, "TOP-SECRET")

	// The page itself works: same request, own origin, cookie.
	code, body = req(t, c, "POST", base+"/api/call/Settings.Update", map[string]string{"Origin": base, "Content-Type": "application/json"}, string(settings))
	require.Equal(t, 200, code, body)
	after, _ = a.Settings.Get()
	require.Equal(t, "dark", after.Theme)
}

// rawPost sends path exactly as written.
func rawPost(t *testing.T, base, path string, hdr map[string]string, body string) string {
	t.Helper()
	addr := strings.TrimPrefix(base, "http://")
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	s := "POST " + path + " HTTP/1.1\r\nConnection: close\r\nContent-Type: application/json\r\n"
	if _, ok := hdr["Host"]; !ok {
		s += "Host: " + addr + "\r\n"
	}
	for k, v := range hdr {
		if k != "Content-Type" {
			s += k + ": " + v + "\r\n"
		}
	}
	s += "Content-Length: " + itoa(len(body)) + "\r\n\r\n" + body
	_, err = io.WriteString(conn, s)
	require.NoError(t, err)
	b, _ := io.ReadAll(conn)
	return string(b)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestUIOtherPort: a page on another port of 127.0.0.1 is "same-site", so
// the browser sends it the SameSite cookie with an <audio src> or a no-cors
// fetch; such requests (Sec-Fetch-Site same-site or cross-site) to /media
// and /api are refused, while the page's own (same-origin), the user's own
// navigation (none) and clients that send no Sec-Fetch-Site still work.
func TestUIOtherPort(t *testing.T) {
	wav := filepath.Join(t.TempDir(), "1.wav")
	require.NoError(t, os.WriteFile(wav, []byte("RIFF-SECRET-RECORDING"), 0o600))
	b := New(Options{Recording: func(id int64) (string, error) { return wav, nil }})
	require.NoError(t, b.Register(&Notes{}))
	base, _, c := tcpServer(t, b)
	for _, site := range []string{"same-site", "cross-site"} {
		for _, r := range []struct{ method, path string }{
			{"GET", "/media/recording/1"},
			{"GET", "/x/../media/recording/1"},
			{"POST", "/api/call/Notes.Count"},
			{"GET", "/api/nothing"},
		} {
			code, body := req(t, c, r.method, base+r.path, map[string]string{"Sec-Fetch-Site": site, "Content-Type": "application/json"}, "[]")
			require.Equal(t, http.StatusForbidden, code, "%s %s: %s", site, r.path, body)
			require.NotContains(t, body, "SECRET")
		}
	}
	for _, site := range []string{"same-origin", "none", ""} {
		code, body := req(t, c, "GET", base+"/media/recording/1", map[string]string{"Sec-Fetch-Site": site}, "")
		require.Equal(t, http.StatusOK, code, "%q: %s", site, body)
		require.Equal(t, "RIFF-SECRET-RECORDING", body)
		code, body = req(t, c, "POST", base+"/api/call/Notes.Count", map[string]string{"Sec-Fetch-Site": site, "Content-Type": "application/json"}, "[]")
		require.Equal(t, http.StatusOK, code, "%q: %s", site, body)
	}
}

// TestMediaNoFollow: a symbolic link planted where a recording should be
// (recordings/ID.wav pointing at another file of the user) is not followed
// by /media, nor is anything but a regular file served.
func TestMediaNoFollow(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("TOP-SECRET"), 0o600))
	link := filepath.Join(dir, "1.wav")
	require.NoError(t, os.Symlink(secret, link))
	notFile := filepath.Join(dir, "3.wav")
	require.NoError(t, os.Mkdir(notFile, 0o700)) // not a regular file
	real := filepath.Join(dir, "2.wav")
	require.NoError(t, os.WriteFile(real, []byte("RIFF-REAL"), 0o600))
	files := map[int64]string{1: link, 2: real, 3: notFile}
	b := New(Options{Recording: func(id int64) (string, error) { return files[id], nil }})
	base, _, c := tcpServer(t, b)
	for _, id := range []string{"1", "3"} {
		code, body := req(t, c, "GET", base+"/media/recording/"+id, nil, "")
		require.Equal(t, http.StatusNotFound, code, "%s: %s", id, body)
		require.NotContains(t, body, "TOP-SECRET")
	}
	code, body := req(t, c, "GET", base+"/media/recording/2", nil, "")
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, "RIFF-REAL", body)
}
