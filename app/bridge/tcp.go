package bridge

import (
	"net"
	"net/http"
	"time"

	"github.com/harkapp/hark/internal/localhttp"
)

// writeTimeout bounds writing one answer over TCP (a recording streamed to
// <audio>, a large reply); the event stream lifts it.
const writeTimeout = 10 * time.Minute

// TCP puts b behind the local gate for a browser on ln (`hark ui`): Host
// must name the listener (or one of allowHosts), foreign origins are
// refused, and every request needs a fresh per-launch token; /api and /media
// answer only the page's own fetches (Sec-Fetch-Site same-origin or none),
// not a page on another port of 127.0.0.1, which gets the cookie. It returns
// the server and the URL to open, which carries the token once; the page
// exchanges it for an HttpOnly SameSite=Strict cookie. The Wails window
// uses b directly as its asset handler: its requests come through the
// window's own scheme, never over TCP.
func (b *Bridge) TCP(ln net.Listener, allowHosts []string) (*http.Server, string, error) {
	tok := localhttp.NewToken()
	g, err := localhttp.New(ln.Addr(), localhttp.Options{AllowHosts: allowHosts, Token: tok, WriteTimeout: writeTimeout,
		SameOriginPaths: []string{"/api", "/media"}})
	if err != nil {
		return nil, "", err
	}
	return localhttp.Server(g.Wrap(b)), "http://" + ln.Addr().String() + "/?token=" + tok, nil
}
