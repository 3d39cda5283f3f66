package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/harkapp/hark/internal/localhttp"
)

// EnvAPIKey holds the API key when --api-key is not given.
const EnvAPIKey = "HARK_API_KEY"

// DefaultAddr is where the server listens unless told otherwise.
const DefaultAddr = "127.0.0.1:8089"

// ReadKeyFile reads an API key from the first line of path, so the key
// need not appear in the process list. As ssh does with private keys, a
// file that other users may read (or write) is refused: they would have
// the key.
func ReadKeyFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("serve: API key file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("serve: API key file: %w", err)
	}
	if perm := st.Mode().Perm(); runtime.GOOS != "windows" && perm&0o077 != 0 {
		return "", fmt.Errorf("serve: API key file %s is accessible by other users (mode %#o); make it private with: chmod 600 %s", path, perm, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return "", fmt.Errorf("serve: API key file: %w", err)
	}
	key, _, _ := strings.Cut(string(b), "\n")
	key = strings.TrimSpace(key)
	if key == "" {
		return "", fmt.Errorf("serve: API key file %s is empty", path)
	}
	return key, nil
}

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

// HTTPServer serves s on ln behind the local gate (internal/localhttp):
// Host must name the listener (or one of Config.AllowHosts) unless ln is
// beyond loopback with an API key, cross-origin requests are refused but
// for Config.CORSOrigins, and reads, writes and idle connections are
// bounded (a write may last a request's own deadline, streams included).
func HTTPServer(s *Server, ln net.Listener) (*http.Server, error) {
	lo, err := IsLoopback(ln.Addr().String())
	if err != nil {
		return nil, err
	}
	g, err := localhttp.New(ln.Addr(), localhttp.Options{
		AllowHosts:   s.cfg.AllowHosts,
		AnyHost:      !lo && s.cfg.APIKey != "",
		CORSOrigins:  s.cfg.CORSOrigins,
		WriteTimeout: s.cfg.RequestTimeout + time.Minute,
	})
	if err != nil {
		return nil, err
	}
	return localhttp.Server(g.Wrap(s)), nil
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
