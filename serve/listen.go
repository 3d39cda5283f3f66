package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// EnvAPIKey holds the API key when --api-key is not given.
const EnvAPIKey = "HARK_API_KEY"

// DefaultAddr is where the server listens unless told otherwise.
const DefaultAddr = "127.0.0.1:8089"

// IsLoopback reports whether addr (HOST:PORT) binds only to this machine.
// An empty host or a name other than localhost binds more widely.
func IsLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("serve: address %q: %w", addr, err)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// Listen opens addr, refusing a non-loopback address without an API key:
// anyone on the network could otherwise use the models.
func Listen(addr, apiKey string) (net.Listener, error) {
	lo, err := IsLoopback(addr)
	if err != nil {
		return nil, err
	}
	if !lo && apiKey == "" {
		return nil, fmt.Errorf("serve: %s is reachable from other machines; set an API key (--api-key or %s) to listen there", addr, EnvAPIKey)
	}
	return net.Listen("tcp", addr)
}

// HTTPServer wraps h with the timeouts of a local API server. Reads are
// bounded so a stalled client cannot hold a connection forever; there is
// no write timeout because streamed answers take as long as generation
// (each request's own deadline bounds that).
func HTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       10 * time.Minute, // a 200 MB upload on a slow link
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}

// Serve runs srv on ln until ctx ends, then shuts down gracefully (running
// requests get a few seconds to finish).
func Serve(ctx context.Context, srv *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close()
	}
	if e := <-errc; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	return err
}
