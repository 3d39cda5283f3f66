package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// syncBuffer is a goroutine-safe stderr for a command running in the
// background.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runUI runs `hark ui` on the data folder in the background, serving a
// stub page; cancel stops it as SIGINT does, and done reports its end.
func runUI(t *testing.T, data string, stderr *syncBuffer) (cancel context.CancelFunc, done chan error) {
	return runUIModels(t, data, t.TempDir(), stderr)
}

// runUIModels is runUI over the models folder models.
func runUIModels(t *testing.T, data, models string, stderr *syncBuffer) (cancel context.CancelFunc, done chan error) {
	assets := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(assets, "index.html"), []byte("<title>Hark</title>"), 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	root := NewRoot(io.Discard, stderr)
	root.SetArgs([]string{"ui", "--addr", "127.0.0.1:0", "--data-dir", data, "--models-dir", models, "--assets", assets})
	done = make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	return cancel, done
}

func TestUI(t *testing.T) {
	data := t.TempDir()
	var stderr syncBuffer
	cancel, done := runUI(t, data, &stderr)

	re := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)/\?token=(\S+)`)
	var url, token string
	require.Eventually(t, func() bool {
		m := re.FindStringSubmatch(stderr.String())
		if m != nil {
			url, token = m[1], m[2]
		}
		return m != nil
	}, shared.Wait(t, 30*time.Second), 20*time.Millisecond, stderr.String())

	// Without the token nothing answers; with it the page gets its cookie.
	resp, err := http.Get(url + "/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	jar, _ := cookiejar.New(nil)
	http := &http.Client{Jar: jar}
	resp, err = http.Get(url + "/?token=" + token)
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(page), "<title>Hark</title>")

	// A real service answers through the bridge: the data folder is ours.
	resp, err = http.Post(url+"/api/call/Settings.DataDir", "application/json", strings.NewReader(`[]`))
	require.NoError(t, err)
	var r struct {
		Result string `json:"result"`
		Error  string `json:"error"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	resp.Body.Close()
	require.Empty(t, r.Error)
	require.Equal(t, data, r.Result)
	require.FileExists(t, filepath.Join(data, "hark.db"))

	cancel() // as SIGINT does
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(shared.Wait(t, 30*time.Second)):
		t.Fatal("hark ui did not stop")
	}
}

func TestUIErrors(t *testing.T) {
	assets := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(assets, "index.html"), nil, 0o644))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ui", "--addr", "0.0.0.0:0", "--assets", assets}, "loopback addresses only"},
		{[]string{"ui", "--addr", "192.168.1.2:80", "--assets", assets}, "loopback addresses only"},
		{[]string{"ui", "--addr", "nonsense", "--assets", assets}, "--addr"},
		{[]string{"ui", "--assets", t.TempDir()}, "no built UI"},
	} {
		var stderr bytes.Buffer
		root := NewRoot(io.Discard, &stderr)
		root.SetArgs(append(tc.args, "--data-dir", t.TempDir()))
		err := root.Execute()
		require.Error(t, err, tc.args)
		require.Contains(t, err.Error(), tc.want, tc.args)
	}
}
