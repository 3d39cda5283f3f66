package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// TestModelsPullChild is the child process of TestModelsPullResumesAfterKill:
// it runs `hark models pull` and is killed mid-download. Run normally it
// does nothing.
func TestModelsPullChild(t *testing.T) {
	args := os.Getenv("HARK_TEST_PULL_ARGS")
	if args == "" {
		return
	}
	os.Exit(Execute(strings.Split(args, "\x1f")))
}

func TestModelsPullResumesAfterKill(t *testing.T) {
	body, err := os.ReadFile(shared.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)
	const name = "smollm2-360m-instruct-q4_k_m"
	const cut = 500_000
	var first atomic.Bool
	first.Store(true)
	var ranges atomic.Value
	ranges.Store("")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/SmolLM2-360M-Instruct-Q4_K_M.gguf") {
			http.NotFound(w, r)
			return
		}
		if first.CompareAndSwap(true, false) {
			// Send part of the file, then hang until the client dies.
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Write(body[:cut])
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		ranges.Store(r.Header.Get("Range"))
		http.ServeContent(w, r, "f", time.Time{}, strings.NewReader(string(body)))
	}))
	defer ts.Close()
	dir := t.TempDir()

	child := exec.Command(os.Args[0], "-test.run=^TestModelsPullChild$")
	child.Env = append(os.Environ(), "HARK_TEST_PULL_ARGS="+strings.Join(
		[]string{"models", "pull", "--models-dir", dir, "--mirror", ts.URL, name}, "\x1f"))
	require.NoError(t, child.Start())
	part := filepath.Join(dir, name+".partial")
	require.Eventually(t, func() bool {
		st, err := os.Stat(part)
		return err == nil && st.Size() == cut
	}, shared.Wait(t, 20*time.Second), 10*time.Millisecond)
	require.NoError(t, child.Process.Kill())
	child.Wait()

	out, errs, code := runCLI(t, "models", "pull", "--models-dir", dir, "--mirror", ts.URL, name)
	require.Zero(t, code, errs)
	require.Equal(t, name+"\n", out)
	// The entry has no published hash, so its partial is never resumed
	// (issue #11: a spliced file must not become the recorded truth): the
	// next pull starts over and completes.
	require.Equal(t, "", ranges.Load())
	got, err := os.ReadFile(filepath.Join(dir, name+".gguf"))
	require.NoError(t, err)
	require.Equal(t, body, got)
	require.NoFileExists(t, part)
}
