package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// A browser script that fails leaves its screenshot where the failure
// message says, and it is still there after the test's temp folders are
// gone. The page here never shows the app, so run.mjs's first wait (its
// bound scaled down to 1.8 s through HARK_TEST_TIMEOUT_SCALE) fails.
func TestBrowserFailureKeepsScreenshot(t *testing.T) {
	fe := filepath.Join(repoRoot(t), "frontend")
	if _, err := os.Stat(filepath.Join(fe, "node_modules", "playwright-core", "package.json")); err != nil {
		run(t, fe, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<!doctype html><title>not hark</title><p>nothing here</p>"))
	}))
	defer srv.Close()
	t.Setenv(shared.WaitScaleEnv, "0.02")
	t.Setenv(shared.FailuresEnv, t.TempDir())
	var msg string
	t.Run("phase", func(t *testing.T) {
		_, err := browserScript(t, fe, "run.mjs", append(os.Environ(), "HARK_URL="+srv.URL, "E2E_PHASE=1",
			"E2E_CASE={}", "E2E_SHOTS="), t.TempDir(), "failure.png")
		require.Error(t, err)
		msg = err.Error()
	})
	m := regexp.MustCompile(`\(screenshot: (\S+)\)$`).FindStringSubmatch(msg)
	require.NotNil(t, m, "the failure names no screenshot: %s", msg)
	b, err := os.ReadFile(m[1])
	require.NoError(t, err, "the screenshot the failure names is not there")
	require.Equal(t, "\x89PNG", string(b[:4]), "not a PNG")
}
