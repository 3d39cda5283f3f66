package localhttp

import (
	"net/http"
	"time"
)

// Server returns an http.Server for h with the timeouts every local
// listener needs: a client that stalls while sending headers or a body,
// or that keeps an idle connection, cannot hold it forever. Writing is
// bounded per request by the Gate (Options.WriteTimeout), not here, so
// that streams can lift it.
func Server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       10 * time.Minute, // a large upload on a slow machine
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}
