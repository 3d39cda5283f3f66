package scripts

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// runScript runs cmd and returns its exit code, stdout and stderr; a
// failure to start it (rather than an exit status) fails the test.
func runScript(t *testing.T, cmd *exec.Cmd) (int, string, string) {
	t.Helper()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "stderr: %s", stderr.String())
		code = ee.ExitCode()
	}
	return code, stdout.String(), stderr.String()
}
