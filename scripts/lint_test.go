package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// runLint runs a copy of scripts/lint in a scratch tree whose go and
// golangci-lint are stubs: golangci-lint reports findings (one per line,
// written where --output.text.path says), or darwin when GOOS is darwin,
// and the ceiling file holds ceiling. It returns the exit code, stdout,
// stderr and the stub's calls (GOOS, CGO_ENABLED and arguments, a line
// each).
func runLint(t *testing.T, findings, darwin []string, ceiling string) (int, string, string, string) {
	t.Helper()
	src, err := os.ReadFile("lint")
	require.NoError(t, err)
	root := t.TempDir()
	gopath := filepath.Join(root, "gopath")
	for _, d := range []string{"scripts", "tools/lint", "bin", "gopath/bin"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	file := func(path, body string, mode os.FileMode) {
		require.NoError(t, os.WriteFile(filepath.Join(root, path), []byte(body), mode))
	}
	file("scripts/lint", string(src), 0o755)
	file("tools/lint/go.mod", "module x\n\nrequire (\n\tgithub.com/golangci/golangci-lint/v2 v9.9.9\n)\n", 0o644)
	file("tools/lint/dupl-ceiling", ceiling, 0o644)
	file("findings", strings.Join(findings, "\n")+"\n", 0o644)
	file("findings-darwin", strings.Join(darwin, "\n")+"\n", 0o644)
	file("bin/go", "#!/bin/sh\n[ \"$*\" = \"env GOPATH\" ] && echo \""+gopath+"\"\nexit 0\n", 0o755)
	file("gopath/bin/golangci-lint-v9.9.9", `#!/bin/sh
echo "GOOS=$GOOS CGO_ENABLED=$CGO_ENABLED $*" >>"`+filepath.Join(root, "calls")+`"
src="`+filepath.Join(root, "findings")+`"
[ "$GOOS" = darwin ] && src="$src-darwin"
while [ $# -gt 0 ]; do
  [ "$1" = --output.text.path ] && cp "$src" "$2"
  shift
done
`, 0o755)
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "lint"))
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(root, "bin")+":"+os.Getenv("PATH"), "GOOS=", "CGO_ENABLED=")
	code, stdout, stderr := runScript(t, cmd)
	calls, err := os.ReadFile(filepath.Join(root, "calls"))
	require.NoError(t, err)
	return code, stdout, stderr, string(calls)
}

const (
	dup1 = "a.go:1: 1-9 lines are duplicate of `b.go:1-9` (dupl)"
	dup2 = "b.go:1: 1-9 lines are duplicate of `a.go:1-9` (dupl)"
	vet  = "c.go:3:2: ineffectual assignment to x (ineffassign)"
)

// Any finding of the enforced linters fails; dupl's count fails only above
// the ceiling, and below it the script says to lower the ceiling.
func TestLintCeiling(t *testing.T) {
	code, out, errOut, _ := runLint(t, []string{dup1, dup2}, nil, "2\n")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Contains(t, out, "lint: clean; dupl 2 (ceiling 2)")

	code, out, errOut, _ = runLint(t, []string{dup1, dup2}, nil, "1\n")
	require.Equal(t, 1, code, out)
	require.Contains(t, errOut, "dupl finds 2 repeated blocks, above the ceiling of 1")
	require.Contains(t, errOut, dup2)

	code, out, errOut, _ = runLint(t, []string{dup1, dup2}, nil, "5\n")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "below the ceiling of 5: lower tools/lint/dupl-ceiling to 2")

	code, _, errOut, _ = runLint(t, []string{dup1, vet}, nil, "5\n")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, vet)
	require.NotContains(t, errOut, dup1, "only the enforced linters' findings are listed")
}

// The lint runs twice: for linux with dupl, and for darwin as CI's darwin
// vet builds (CGO_ENABLED=0) without it. A darwin-only finding fails; one
// both runs report is listed once.
func TestLintDarwin(t *testing.T) {
	const mac = "macos/x_darwin.go:5:6: func f is unused (unused)"
	code, out, errOut, calls := runLint(t, []string{dup1}, nil, "1\n")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	lines := strings.Split(strings.TrimSpace(calls), "\n")
	require.Len(t, lines, 2, calls)
	require.True(t, strings.HasPrefix(lines[0], "GOOS= CGO_ENABLED= run "), lines[0])
	require.Contains(t, lines[0], "--enable dupl")
	require.True(t, strings.HasPrefix(lines[1], "GOOS=darwin CGO_ENABLED=0 run "), lines[1])
	require.NotContains(t, lines[1], "dupl", "dupl is counted on the linux run only")

	code, _, errOut, _ = runLint(t, []string{dup1}, []string{mac}, "1\n")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, mac)

	code, _, errOut, _ = runLint(t, []string{dup1, vet}, []string{vet}, "1\n")
	require.Equal(t, 1, code)
	require.Equal(t, 1, strings.Count(errOut, vet), errOut)
}
