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

// runSuite runs a copy of scripts/test with args in a scratch tree (with
// one fuzz target, FuzzStub in ./stub) whose go, npm, smoke-app and
// check-release are stubs that log their calls; go fails for the
// arguments in failGo, npm when FAIL_NPM is set in env (extra variables).
// It returns the exit code, stdout, stderr and the log of calls, followed
// by what the stubs saw: go test ./... the timeout scale and every
// process's pid and state (from /proc), smoke-app and check-release
// HARK_FRONTEND_BUILT. HARK_TEST_TIMEOUT_SCALE and FUZZTIME are
// not passed on: the script's defaults are under test.
func runSuite(t *testing.T, failGo string, env []string, args ...string) (int, string, string, string) {
	t.Helper()
	src, err := os.ReadFile("test")
	require.NoError(t, err)
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	log := filepath.Join(root, "calls.log")
	for _, d := range []string{"scripts", "frontend", "bin", "stub"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	write := func(path, body string) {
		require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "scripts", "test"), src, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "stub", "stub_test.go"), []byte("package stub\n\nfunc FuzzStub(f *testing.F) {}\n"), 0o644))
	for _, s := range []string{"smoke-app", "check-release"} {
		write(filepath.Join(root, "scripts", s), `echo "`+s+`" >>"$CALLS"
echo "`+s+` frontend built: ${HARK_FRONTEND_BUILT:-no}" >>"$CALLS.env"
`)
	}
	write(filepath.Join(root, "scripts", "lint"), `echo "lint" >>"$CALLS"`+"\n")
	write(filepath.Join(bin, "npm"), `echo "npm $*" >>"$CALLS"
[ -z "$FAIL_NPM" ]
`)
	write(filepath.Join(bin, "go"), `echo "go $*" >>"$CALLS"
if [ "$*" = "test -timeout 60m ./..." ]; then
  echo "timeout scale: ${HARK_TEST_TIMEOUT_SCALE:-unset}" >>"$CALLS.env"
  for s in /proc/[0-9]*/stat; do read -r pid _ state _ <"$s" && echo "process $pid $state"; done >>"$CALLS.env" 2>/dev/null
fi
[ -n "$FAIL_GO" ] && [ "$*" = "$FAIL_GO" ] && exit 1
exit 0
`)
	cmd := exec.Command("bash", append([]string{filepath.Join(root, "scripts", "test")}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HARK_TEST_TIMEOUT_SCALE=") && !strings.HasPrefix(kv, "FUZZTIME=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(append(cmd.Env, "PATH="+bin+":"+os.Getenv("PATH"), "CALLS="+log, "FAIL_GO="+failGo), env...)
	code, stdout, stderr := runScript(t, cmd)
	var calls []byte
	for _, name := range []string{log, log + ".env"} { // (neither exists when the arguments are refused)
		b, err := os.ReadFile(name)
		if !os.IsNotExist(err) {
			require.NoError(t, err)
		}
		calls = append(calls, b...)
	}
	return code, stdout, stderr, string(calls)
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
	code, stdout, stderr, calls := runSuite(t, "test -timeout 60m ./...", nil)
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
	code, stdout, stderr, calls := runSuite(t, "", nil)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	requireStepLines(t, stdout)
	require.Contains(t, calls, "smoke-app\ncheck-release\n")
	require.Contains(t, calls, "lint\n")
	require.Regexp(t, `(?m)^ +\d+ s  go test$`, stdout)
	require.Contains(t, stdout, "== all steps passed")
	require.NotContains(t, stderr, "FAILED")
}

// Each fuzz target runs for a number of inputs, not for a time: the same
// work on a quiet machine and a loaded one.
func TestSuiteFuzzesByCount(t *testing.T) {
	code, stdout, stderr, calls := runSuite(t, "", nil)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Contains(t, calls, "go test -run ^$ -fuzz ^FuzzStub$ -fuzztime 10000x ./stub\n")
	require.Contains(t, stdout, "fuzz targets (10000x each)")
}

// --busy N runs N busy processes for the whole suite (they are running
// during go test and gone when the script has exited), and raises the
// timeout scale to 1 + N/2 unless it is set.
func TestSuiteBusy(t *testing.T) {
	code, stdout, stderr, calls := runSuite(t, "", nil, "--busy", "2")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	m := regexp.MustCompile(`== 2 busy processes beside the suite \(pids (\d+) (\d+)\)`).FindStringSubmatch(stdout)
	require.NotNil(t, m, "stdout:\n%s", stdout)
	require.Contains(t, calls, "timeout scale: 2\n")
	for _, pid := range m[1:] {
		require.Regexp(t, `(?m)^process `+pid+` [RS]$`, calls, "busy process %s during go test", pid)
		_, err := os.Stat("/proc/" + pid)
		require.ErrorIs(t, err, os.ErrNotExist, "busy process %s still there after the suite", pid)
	}
	requireStepLines(t, stdout)

	// Without --busy: none, and the scale is left alone.
	_, stdout, _, calls = runSuite(t, "", nil)
	require.NotContains(t, stdout, "busy processes")
	require.Contains(t, calls, "timeout scale: unset\n")

	for _, bad := range [][]string{{"--busy", "x"}, {"--busy"}, {"--busy=-1"}, {"--frobnicate"}} {
		code, _, stderr, _ := runSuite(t, "", nil, bad...)
		require.Equal(t, 2, code, "%v", bad)
		require.Contains(t, stderr, "scripts/test:", "%v", bad)
	}
}

// Once the frontend step has built frontend/dist, the smoke test and the
// release checks reuse it (HARK_FRONTEND_BUILT=1: wails build -s); when it
// failed, they build it themselves. The variable is not taken from the
// caller.
func TestSuiteReusesTheFrontendBuild(t *testing.T) {
	code, stdout, stderr, calls := runSuite(t, "", []string{"HARK_FRONTEND_BUILT=1"})
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Contains(t, calls, "smoke-app frontend built: 1\ncheck-release frontend built: 1\n")

	code, stdout, stderr, calls = runSuite(t, "", []string{"FAIL_NPM=1", "HARK_FRONTEND_BUILT=1"})
	require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	requireStepLines(t, stdout)
	require.Contains(t, stderr, "== FAILED steps (1):\n   frontend build")
	require.Contains(t, calls, "smoke-app frontend built: no\ncheck-release frontend built: no\n")
}
