package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/harkapp/hark/internal/shared"
)

// scriptWait is the base bound on each wait of the browser scripts
// (timeout.mjs), before HARK_TEST_TIMEOUT_SCALE.
const scriptWait = 90 * time.Second

// browserScript runs node on the e2e script with the environment env plus
// E2E_TIMEOUT_MS (scriptWait, scaled) and E2E_OUT=out, and logs and
// returns its output. A script that fails writes a screenshot named shot into out
// ("": none); it is copied where it outlives the test's temp folders and
// the error says where (or that there is none).
func browserScript(t *testing.T, fe, script string, env []string, out, shot string) ([]byte, error) {
	t.Helper()
	node := exec.Command("node", filepath.Join(fe, "e2e", script))
	node.Dir = fe
	node.Env = append(env, "E2E_OUT="+out,
		"E2E_TIMEOUT_MS="+strconv.FormatInt(shared.Wait(t, scriptWait).Milliseconds(), 10))
	start := time.Now()
	output, err := node.CombinedOutput()
	t.Logf("%s (%.1f s):\n%s", script, time.Since(start).Seconds(), output)
	if err == nil || shot == "" {
		return output, err
	}
	if kept := shared.KeepOnFailure(t, filepath.Join(out, shot)); kept != "" {
		return output, fmt.Errorf("%s: %w (screenshot: %s)", script, err, kept)
	}
	return output, fmt.Errorf("%s: %w (it wrote no screenshot)", script, err)
}

// scratchDir is $E2E_OUT (kept after the test), else a temp folder.
func scratchDir(t *testing.T) string {
	if out := os.Getenv("E2E_OUT"); out != "" {
		return out
	}
	return t.TempDir()
}
