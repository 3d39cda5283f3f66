package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// hark serve prints its address once it accepts requests, serves the
// models folder and stops when its context ends.
func TestServeCommand(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(shared.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stories.gguf"), b, 0o644))

	pr, pw := io.Pipe()
	root := NewRoot(io.Discard, pw)
	root.SetArgs([]string{"serve", "--addr", "127.0.0.1:0", "--models-dir", dir})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx); pw.Close() }()

	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	require.True(t, ok, "%q", line)
	require.True(t, strings.HasPrefix(addr, "http://127.0.0.1:"), addr)
	go io.Copy(io.Discard, pr)

	resp, err := http.Get(addr + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	resp, err = http.Post(addr+"/v1/completions", "application/json",
		strings.NewReader(`{"model":"stories","prompt":"Once upon a time","max_tokens":8,"temperature":0}`))
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	require.Contains(t, string(body), ", there was a little girl")

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(shared.Wait(t, 10*time.Second)):
		t.Fatal("serve did not stop")
	}
}

// Listening beyond loopback needs an API key.
func TestServeNeedsKeyOffLoopback(t *testing.T) {
	t.Setenv("HARK_API_KEY", "")
	_, errs, code := runCLI(t, "serve", "--addr", "0.0.0.0:0", "--models-dir", t.TempDir())
	require.NotZero(t, code)
	require.Contains(t, errs, "API key")
}

// Bad flags are refused before the server listens: no "listening on"
// line ever precedes the error.
func TestServeRefusesBeforeListening(t *testing.T) {
	t.Setenv("HARK_API_KEY", "")
	key := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(key, []byte("s3cret\n"), 0o600))
	require.NoError(t, os.Chmod(key, 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cors-origin", "http://localhost:3000/"}, "CORS origin"},
		{[]string{"--cors-origin", "*"}, "CORS origin"},
		{[]string{"--api-key-file", key}, "chmod 600"},
	} {
		_, errs, code := runCLI(t, append([]string{"serve", "--addr", "127.0.0.1:0", "--models-dir", t.TempDir()}, c.args...)...)
		require.NotZero(t, code, "%v", c.args)
		require.Contains(t, errs, c.want)
		require.NotContains(t, errs, "listening on", "%v", c.args)
	}
}
