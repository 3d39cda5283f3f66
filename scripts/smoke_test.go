package scripts

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// The desktop smoke test scales its waits by the same factor as the Go
// tests and refuses one that is not a positive number before it builds or
// starts anything.
func TestSmokeAppRejectsBadScale(t *testing.T) {
	for _, bad := range []string{"0", "-2", "slow"} {
		cmd := exec.Command("bash", "smoke-app")
		cmd.Env = append(os.Environ(), "HARK_TEST_TIMEOUT_SCALE="+bad, "SMOKE_SKIP_BUILD=1", "SMOKE_OUT="+t.TempDir())
		out, err := cmd.CombinedOutput()
		require.Error(t, err, bad)
		require.Contains(t, string(out), "smoke: HARK_TEST_TIMEOUT_SCALE="+bad+": want a positive number", bad)
	}
}
