// Package scripts holds the tests of the repository's shell scripts.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// suiteSteps are the steps scripts/test runs, in order, and its summary.
var suiteSteps = []string{
	"go vet (linux)",
	"go vet (darwin",
	"darwin links",
	"golangci-lint",
	"fuzz targets",
	"frontend build",
	"go test",
	"desktop app smoke test",
	"release steps that run on Linux",
	"working tree unchanged",
	"done; time per step:",
}

// runSuite runs a copy of scripts/test in a scratch tree whose go, npm,
// smoke-app and check-release are stubs that log their calls; go fails
// for the arguments in failGo. It returns the exit code, stdout, stderr
// and the log.
func runSuite(t *testing.T, failGo string) (int, string, string, string) {
	t.Helper()
	src, err := os.ReadFile("test")
	require.NoError(t, err)
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	log := filepath.Join(root, "calls.log")
	for _, d := range []string{"scripts", "frontend", "bin"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	write := func(path, body string) {
		require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "scripts", "test"), src, 0o755))
	write(filepath.Join(root, "scripts", "smoke-app"), `echo "smoke-app" >>"$CALLS"`+"\n")
	write(filepath.Join(root, "scripts", "check-release"), `echo "check-release" >>"$CALLS"`+"\n")
	write(filepath.Join(root, "scripts", "lint"), `echo "lint" >>"$CALLS"`+"\n")
	write(filepath.Join(bin, "npm"), `echo "npm $*" >>"$CALLS"`+"\n")
	write(filepath.Join(bin, "go"), `echo "go $*" >>"$CALLS"
[ -n "$FAIL_GO" ] && [ "$*" = "$FAIL_GO" ] && exit 1
exit 0
`)
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "test"))
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "CALLS="+log, "FAIL_GO="+failGo)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "stderr: %s", stderr.String())
		code = ee.ExitCode()
	}
	calls, err := os.ReadFile(log)
	require.NoError(t, err)
	return code, stdout.String(), stderr.String(), string(calls)
}

// Every step's line carries the wall time and the seconds since the start.
func requireStepLines(t *testing.T, stdout string) {
	t.Helper()
	line := regexp.MustCompile(`(?m)^== \[\d\d:\d\d:\d\d \+\d+ s\] (.*)$`)
	var got []string
	for _, m := range line.FindAllStringSubmatch(stdout, -1) {
		got = append(got, m[1])
	}
	require.Len(t, got, len(suiteSteps), "step lines in:\n%s", stdout)
	for i, want := range suiteSteps {
		require.True(t, strings.HasPrefix(got[i], want), "step %d is %q, want %q…", i, got[i], want)
	}
}

// A failing go test does not skip the later steps: the smoke test, the
// release checks and the working-tree check still run, and the script
// exits 1 naming the failed step.
func TestSuiteRunsEveryStepAfterAFailure(t *testing.T) {
	code, stdout, stderr, calls := runSuite(t, "test -timeout 60m ./...")
	require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	requireStepLines(t, stdout)
	require.Contains(t, calls, "go test -timeout 60m ./...\nsmoke-app\ncheck-release\n", "the steps after go test ran")
	require.Contains(t, stdout, "working tree unchanged by the tests")
	require.Regexp(t, `FAILED after \d+ s: go test \(exit 1\)`, stderr)
	require.Contains(t, stderr, "== FAILED steps (1):\n   go test (exit 1)\n")
	require.NotContains(t, stdout, "all steps passed")
}

// With every step passing the script exits 0 and lists each step's time.
func TestSuitePasses(t *testing.T) {
	code, stdout, stderr, calls := runSuite(t, "")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	requireStepLines(t, stdout)
	require.Contains(t, calls, "smoke-app\ncheck-release\n")
	require.Contains(t, calls, "lint\n")
	require.Regexp(t, `(?m)^ +\d+ s  go test$`, stdout)
	require.Contains(t, stdout, "== all steps passed")
	require.NotContains(t, stderr, "FAILED")
}
