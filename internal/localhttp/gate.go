// Package localhttp is the gate in front of every HTTP listener Hark opens
// on the user's machine (`hark ui`'s bridge, `hark serve` and the in-app
// API server, and any later endpoint such as a WebSocket). A web page the
// user merely visits can send requests to 127.0.0.1: directly (a "simple"
// cross-origin POST needs no preflight), or after rebinding its own domain
// to 127.0.0.1 (then Host and Origin both name the attacker's domain and
// look "same-origin"). The gate refuses both before any handler runs:
//
//   - Host must name the listener: 127.0.0.1, localhost or [::1] with the
//     listener's port, or a name the user allowed (--allow-host). A server
//     that binds beyond loopback behind an API key may accept any Host
//     (Options.AnyHost): the key protects it, not the name. A request
//     line in absolute form (GET http://HOST/path), which only proxies
//     receive, is refused.
//   - An Origin header other than the server's own (http://HOST of an
//     allowed Host) or a listed CORS origin is refused, "null" included;
//     so is Sec-Fetch-Site: cross-site from an unlisted origin (an <img> or
//     form navigation carries no Origin on GET).
//   - CORS preflights are answered only for listed origins.
//   - Options.SameOriginPaths are for the server's own pages only: a
//     request there with Sec-Fetch-Site same-site (a page on another port
//     of 127.0.0.1) or cross-site is refused.
//   - With Options.Token, every request needs the per-launch secret: the
//     URL printed at start carries ?token=..., which the gate exchanges for
//     an HttpOnly SameSite=Strict cookie and redirects to the clean URL.
//   - The path is cleaned (//api/x, /x/../api) before the checks and the
//     handler see it, so an unclean spelling gets the checks of its clean
//     form.
//   - Each request gets a write deadline (Options.WriteTimeout); a
//     streaming handler lifts it with Stream.
//
// Wrapping a new handler (a WebSocket endpoint, a control socket's HTTP
// form) is one line where its listener is opened:
//
//	ln, _ := net.Listen("tcp", "127.0.0.1:0")
//	g, err := localhttp.New(ln.Addr(), localhttp.Options{AllowHosts: hosts})
//	srv := localhttp.Server(g.Wrap(handler))
//	srv.Serve(ln)
//
// Handlers mounted behind an already gated mux (such as a route added to
// serve.Server or the bridge) are covered without more work. A WebSocket
// upgrade is a GET with an Origin header, which the gate checks like any
// other; the handler calls Stream(w) before it hijacks or streams.
package localhttp

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"
)

// Options configure a Gate; the zero value allows loopback names only, no
// CORS, no token.
type Options struct {
	// AllowHosts are further Host names the user accepts, as "name" (with
	// the listener's port) or "name:port".
	AllowHosts []string
	// AnyHost accepts every Host: only for a server bound beyond loopback
	// that requires an API key.
	AnyHost bool
	// CORSOrigins are origins ("http://localhost:3000") whose pages may
	// call the server; preflights are answered for these only.
	CORSOrigins []string
	// Token, when set, is required of every request (cookie or ?token=).
	Token string
	// WriteTimeout bounds writing each answer (0: none); see Stream.
	WriteTimeout time.Duration
	// SameOriginPaths are path prefixes ("/api") that only the server's own
	// pages may fetch: a request there marked with a Sec-Fetch-Site other
	// than same-origin or none (a user's own navigation) is refused. With
	// Token, it stops pages on another port of the same host ("same-site"),
	// to which browsers send the SameSite cookie.
	SameOriginPaths []string
}

// Gate checks requests before a handler sees them.
type Gate struct {
	port   string
	hosts  map[string]bool // lower-case "host:port"
	opts   Options
	cookie string
}

// New returns the gate for a listener at addr (its real address, after
// Listen: the port of "127.0.0.1:0" is known only then).
func New(addr net.Addr, opts Options) (*Gate, error) {
	_, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return nil, fmt.Errorf("localhttp: listener address %q: %w", addr, err)
	}
	g := &Gate{port: port, hosts: map[string]bool{}, opts: opts, cookie: "hark_token_" + port}
	for _, h := range []string{"127.0.0.1", "localhost", "[::1]"} {
		g.hosts[h+":"+port] = true
	}
	for _, h := range opts.AllowHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			if strings.Contains(strings.Trim(h, "[]"), ":") && !strings.HasPrefix(h, "[") {
				h = "[" + h + "]" // a bare IPv6 address
			}
			h += ":" + port
		}
		g.hosts[h] = true
	}
	for _, o := range opts.CORSOrigins {
		if err := CheckOrigin(o); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// CheckOrigin refuses CORS entries a browser never sends as Origin (a
// path, a trailing slash, "*", "null").
func CheckOrigin(o string) error {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
		return fmt.Errorf("localhttp: CORS origin %q: want scheme://host[:port], as a browser sends it", o)
	}
	return nil
}

// NewToken returns a fresh per-launch secret (256 random bits).
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand never fails on supported systems
	return base64.RawURLEncoding.EncodeToString(b)
}

// Wrap returns h behind the gate.
func (g *Gate) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Host != "" || r.URL.Scheme != "" {
			// Absolute form (GET http://HOST/path): Go takes r.Host from the
			// URL and drops the Host header, so the name the connection was
			// made for is unknowable. Only proxies get this form.
			refuse(w, "absolute-form request target refused (this server is not a proxy): send the path with a Host header")
			return
		}
		if !g.hostOK(r.Host) {
			refuse(w, "Host "+quote(r.Host)+" is not this server's: a page may have rebound its name to 127.0.0.1 (add it with --allow-host if you trust it)")
			return
		}
		clean := cleanPath(r.URL.Path)
		if clean != r.URL.Path {
			r.URL.Path, r.URL.RawPath = clean, ""
		}
		origin, hasOrigin := r.Header["Origin"]
		listed := hasOrigin && len(origin) == 1 && slices.Contains(g.opts.CORSOrigins, origin[0])
		if hasOrigin && !listed && !g.ownOrigin(origin, r.Host) {
			refuse(w, "cross-origin request refused (Origin "+quote(strings.Join(origin, ", "))+")")
			return
		}
		if !hasOrigin && r.Header.Get("Sec-Fetch-Site") == "cross-site" {
			refuse(w, "cross-site request refused")
			return
		}
		if listed {
			hd := w.Header()
			hd.Set("Access-Control-Allow-Origin", origin[0])
			hd.Add("Vary", "Origin")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				hd.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
				hd.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
				hd.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" && g.sameOriginOnly(r.URL.Path) {
			refuse(w, "request from another site refused (Sec-Fetch-Site "+quote(site)+"): only this server's own page may call "+r.URL.Path)
			return
		}
		if g.opts.Token != "" && !g.tokenOK(w, r) {
			return
		}
		if g.opts.WriteTimeout > 0 {
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(g.opts.WriteTimeout))
		}
		h.ServeHTTP(w, r)
	})
}

func (g *Gate) sameOriginOnly(p string) bool {
	for _, pre := range g.opts.SameOriginPaths {
		if p == pre || strings.HasPrefix(p, strings.TrimSuffix(pre, "/")+"/") {
			return true
		}
	}
	return false
}

func (g *Gate) hostOK(host string) bool {
	if g.opts.AnyHost {
		return true
	}
	return g.hosts[strings.ToLower(host)]
}

// ownOrigin: the Origin names the (already accepted) Host. Only one Origin
// header is meaningful; several are refused.
func (g *Gate) ownOrigin(origin []string, host string) bool {
	if len(origin) != 1 || g.opts.AnyHost && !g.hosts[strings.ToLower(host)] {
		// Beyond loopback the Host is whatever the client chose; there the
		// API key, not Origin, is the protection, but a browser page still
		// gets no cross-origin access unless listed.
		return false
	}
	o := strings.ToLower(origin[0])
	h := strings.ToLower(host)
	return o == "http://"+h || o == "https://"+h
}

// tokenOK admits a request with the session cookie, exchanges a correct
// ?token= for the cookie (redirecting to the URL without it) and refuses
// everything else.
func (g *Gate) tokenOK(w http.ResponseWriter, r *http.Request) bool {
	want := []byte(g.opts.Token)
	if c, err := r.Cookie(g.cookie); err == nil && subtle.ConstantTimeCompare([]byte(c.Value), want) == 1 {
		return true
	}
	q := r.URL.Query()
	if tok := q.Get("token"); tok != "" && subtle.ConstantTimeCompare([]byte(tok), want) == 1 &&
		(r.Method == http.MethodGet || r.Method == http.MethodHead) {
		http.SetCookie(w, &http.Cookie{Name: g.cookie, Value: g.opts.Token, Path: "/",
			HttpOnly: true, SameSite: http.SameSiteStrictMode})
		q.Del("token")
		u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
		http.Redirect(w, r, u.String(), http.StatusSeeOther)
		return false
	}
	refuse(w, "this server needs the token of the URL it printed at start (open that URL)")
	return false
}

// cleanPath is path.Clean keeping a trailing slash (a folder's URL).
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// refuse answers 403 in the JSON shape both servers use for errors
// (OpenAI's error object carries "message"; the bridge reads "error").
func refuse(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintf(w, `{"error":{"message":%s,"type":"forbidden","code":"forbidden"}}`+"\n", jsonString(msg))
}

func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return fmt.Sprintf("%q", s)
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == '<' || r == '>' || r == '&':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Stream lifts the gate's write deadline for a long-lived answer (server-
// sent events, a WebSocket, a streamed completion bounded by its own
// request deadline).
func Stream(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
}
