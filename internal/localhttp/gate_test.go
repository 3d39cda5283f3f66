package localhttp

import (
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// served starts h behind a gate on a real loopback listener and returns
// its base URL and a counter of requests that reached h.
func served(t *testing.T, opts Options) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	g, err := New(ln.Addr(), opts)
	require.NoError(t, err)
	var hits atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "ok "+r.URL.Path)
	})
	srv := Server(g.Wrap(h))
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String(), &hits
}

func do(t *testing.T, c *http.Client, method, url string, hdr map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestGateHost(t *testing.T) {
	base, hits := served(t, Options{AllowHosts: []string{"host.docker.internal", "box.lan:1"}})
	port := base[strings.LastIndex(base, ":")+1:]
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST:" + port, "[::1]:" + port, "host.docker.internal:" + port} {
		code, body := do(t, nil, "GET", base+"/x", map[string]string{"Host": host}, "")
		require.Equal(t, 200, code, "%s: %s", host, body)
	}
	n := hits.Load()
	for _, host := range []string{"evil.example:" + port, "rebind.test:" + port, "127.0.0.1", "localhost:1", "127.0.0.1:" + port + ".evil", "localhost.:" + port, "box.lan:" + port} {
		code, body := do(t, nil, "GET", base+"/x", map[string]string{"Host": host}, "")
		require.Equal(t, 403, code, "Host %q: %s", host, body)
		require.Contains(t, body, "not this server's")
	}
	require.Equal(t, n, hits.Load(), "a refused request reached the handler")
}

func TestGateAnyHost(t *testing.T) {
	base, _ := served(t, Options{AnyHost: true})
	code, _ := do(t, nil, "GET", base+"/x", map[string]string{"Host": "server.lan:8089"}, "")
	require.Equal(t, 200, code)
	// Any Host, but a browser page from it still gets no cross-origin use.
	code, _ = do(t, nil, "POST", base+"/x", map[string]string{"Host": "evil.example", "Origin": "http://evil.example"}, "")
	require.Equal(t, 403, code)
}

func TestGateOrigin(t *testing.T) {
	base, hits := served(t, Options{CORSOrigins: []string{"http://localhost:3000"}})
	host := strings.TrimPrefix(base, "http://")
	for _, o := range []string{base, "http://localhost:" + host[strings.LastIndex(host, ":")+1:], "http://localhost:3000"} {
		h := map[string]string{"Origin": o}
		if strings.Contains(o, "localhost:") && o != "http://localhost:3000" {
			h["Host"] = strings.TrimPrefix(o, "http://")
		}
		code, body := do(t, nil, "POST", base+"/x", h, "{}")
		require.Equal(t, 200, code, "%s: %s", o, body)
	}
	n := hits.Load()
	cases := []map[string]string{
		{"Origin": "null"},
		{"Origin": "http://evil.example"},
		{"Origin": "http://localhost:3001"},
		{"Origin": "https://localhost:3000"},
		{"Origin": base + ".evil.example"},
		{"Origin": "http://evil.example", "Content-Type": "text/plain"},
		{"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"},
		{"Origin": "http://evil.example", "Content-Type": "multipart/form-data; boundary=x"},
		{"Sec-Fetch-Site": "cross-site"},
	}
	for _, h := range cases {
		code, body := do(t, nil, "POST", base+"/x", h, "a=b")
		require.Equal(t, 403, code, "%v: %s", h, body)
	}
	require.Equal(t, n, hits.Load(), "a refused request reached the handler")
}

func TestGateCORS(t *testing.T) {
	base, hits := served(t, Options{CORSOrigins: []string{"http://localhost:3000"}})
	pre := map[string]string{"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}
	req, _ := http.NewRequest("OPTIONS", base+"/v1/chat/completions", nil)
	for k, v := range pre {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 204, resp.StatusCode)
	require.Equal(t, "http://localhost:3000", resp.Header.Get("Access-Control-Allow-Origin"))
	require.Contains(t, resp.Header.Get("Access-Control-Allow-Headers"), "Content-Type")
	require.Zero(t, hits.Load())

	pre["Origin"] = "http://evil.example"
	code, _ := do(t, nil, "OPTIONS", base+"/v1/chat/completions", pre, "")
	require.Equal(t, 403, code)

	_, err = New(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, Options{CORSOrigins: []string{"http://x/"}})
	require.Error(t, err)
	_, err = New(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, Options{CORSOrigins: []string{"*"}})
	require.Error(t, err)
}

func TestGateToken(t *testing.T) {
	tok := NewToken()
	require.Len(t, tok, 43)
	base, hits := served(t, Options{Token: tok})
	for _, u := range []string{base + "/", base + "/api/call/X.Y", base + "/?token=wrong", base + "/?token=" + tok[:10]} {
		code, body := do(t, nil, "GET", u, nil, "")
		require.Equal(t, 403, code, u)
		require.Contains(t, body, "token")
	}
	// A forged cookie is no better.
	code, _ := do(t, nil, "GET", base+"/", map[string]string{"Cookie": "hark_token_" + base[strings.LastIndex(base, ":")+1:] + "=nope"}, "")
	require.Equal(t, 403, code)
	// The token is only exchanged on GET (a POST ?token= from a page that
	// learned it would otherwise set the cookie cross-site).
	code, _ = do(t, nil, "POST", base+"/api/call/X.Y?token="+tok, nil, "")
	require.Equal(t, 403, code)
	require.Zero(t, hits.Load())

	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(base + "/files?token=" + tok + "&a=1")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "ok /files", string(b))
	require.Equal(t, "/files", resp.Request.URL.Path)
	require.Equal(t, "a=1", resp.Request.URL.RawQuery, "the token is dropped from the URL")
	sc := resp.Request.Response.Header.Get("Set-Cookie")
	require.Contains(t, sc, "HttpOnly")
	require.Contains(t, sc, "SameSite=Strict")
	code, _ = do(t, c, "POST", base+"/api/call/X.Y", nil, "[]")
	require.Equal(t, 200, code)
}

func TestGateCleanPath(t *testing.T) {
	var seen []string
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	g, err := New(ln.Addr(), Options{})
	require.NoError(t, err)
	srv := Server(g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = append(seen, r.URL.Path) })))
	go srv.Serve(ln)
	defer srv.Close()
	for _, p := range []string{"//api/call/X.Y", "/x/../api/call/X.Y", "/api/./call//X.Y", "/x/%2e%2e/api/call/X.Y"} {
		// Raw, so the path goes out exactly as written.
		c, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		_, err = io.WriteString(c, "POST "+p+" HTTP/1.1\r\nHost: "+ln.Addr().String()+"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		require.NoError(t, err)
		resp, err := io.ReadAll(c)
		c.Close()
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(string(resp), "HTTP/1.1 200"), "%s: %s", p, resp)
	}
	require.Equal(t, []string{"/api/call/X.Y", "/api/call/X.Y", "/api/call/X.Y", "/api/call/X.Y"}, seen)
	require.Equal(t, "/a/", cleanPath("/a/b/../"))
	require.Equal(t, "/", cleanPath(""))
}

func TestServerTimeouts(t *testing.T) {
	s := Server(http.NotFoundHandler())
	require.NotZero(t, s.ReadHeaderTimeout)
	require.NotZero(t, s.ReadTimeout)
	require.NotZero(t, s.IdleTimeout)
	require.NotZero(t, s.MaxHeaderBytes)
}

func TestGateWriteTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	g, err := New(ln.Addr(), Options{WriteTimeout: 100 * time.Millisecond})
	require.NoError(t, err)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stream" {
			Stream(w)
		}
		time.Sleep(300 * time.Millisecond)
		io.WriteString(w, strings.Repeat("x", 1<<20))
	})
	srv := Server(g.Wrap(h))
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	resp, err := http.Get(base + "/slow")
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	require.Error(t, err, "a write past the deadline is cut")
	resp, err = http.Get(base + "/stream")
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Len(t, b, 1<<20)
}

func TestLimiter(t *testing.T) {
	now := time.Unix(0, 0)
	l := &Limiter{N: 2, Per: time.Minute, now: func() time.Time { return now }}
	require.True(t, l.Allow())
	require.True(t, l.Allow())
	require.False(t, l.Allow())
	now = now.Add(61 * time.Second)
	require.True(t, l.Allow())
}

var _ = httptest.NewRecorder

// rawGet sends one request with the request line's target and the Host
// header written as given.
func rawGet(t *testing.T, base, target, host string, hdr ...string) string {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer c.Close()
	req := "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n"
	for _, h := range hdr {
		req += h + "\r\n"
	}
	_, err = io.WriteString(c, req+"\r\n")
	require.NoError(t, err)
	b, _ := io.ReadAll(c)
	return string(b)
}

// TestGateAbsoluteForm: a request line in absolute form
// (GET http://HOST/path) names a host beside the Host header, and Go's
// server takes r.Host from the URL and drops the header: such requests are
// refused whatever they name (only proxies get them); the origin form
// still works.
func TestGateAbsoluteForm(t *testing.T) {
	for _, opts := range []Options{{}, {AnyHost: true}} {
		base, hits := served(t, opts)
		own := strings.TrimPrefix(base, "http://")
		port := own[strings.LastIndex(own, ":")+1:]
		for _, c := range []struct{ target, host string }{
			{"http://evil.example/v1/models", own},
			{"http://evil.example:" + port + "/v1/models", own},
			{base + "/v1/models", "evil.example:" + port},
			{"http://localhost:" + port + "/v1/models", "evil.example"},
			{base + "/v1/models", own},
		} {
			resp := rawGet(t, base, c.target, c.host)
			require.True(t, strings.HasPrefix(resp, "HTTP/1.1 403"), "%s with Host %s: %s", c.target, c.host, resp)
			require.Contains(t, resp, "absolute-form")
		}
		require.Zero(t, hits.Load())
		resp := rawGet(t, base, "/v1/models", own)
		require.True(t, strings.HasPrefix(resp, "HTTP/1.1 200"), resp)
	}
}
