package serve

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// localOrigin refuses a request a web page on another site made (its
// Origin is not a loopback one; "null" included) or that reached the
// server through a name other than a loopback one (DNS rebinding), with
// 403. Requests without an Origin (non-browser clients) pass the Origin
// check; with an API key the Host may be any. Used by the WebSocket endpoint, which browsers open across
// origins without CORS.
func localOrigin(r *http.Request, keyed bool) error {
	forbidden := func(msg string) error { return newError(http.StatusForbidden, "", "forbidden", msg) }
	// A server with an API key may listen on the network under any name;
	// a rebinding page cannot know the key.
	if !keyed && !loopbackHost(r.Host) {
		return forbidden("the Host header must name this machine (localhost, 127.0.0.1 or [::1])")
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !loopbackHost(u.Host) {
			return forbidden("cross-origin requests are refused (Origin " + truncate(o, 100) + ")")
		}
	}
	return nil
}

// loopbackHost reports whether HOST[:PORT] names the loopback interface.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
