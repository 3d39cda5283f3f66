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
// written where --output.text.path says) and the ceiling file holds
// ceiling. It returns the exit code, stdout and stderr.
func runLint(t *testing.T, findings []string, ceiling string) (int, string, string) {
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
	file("bin/go", "#!/bin/sh\n[ \"$*\" = \"env GOPATH\" ] && echo \""+gopath+"\"\nexit 0\n", 0o755)
	file("gopath/bin/golangci-lint-v9.9.9", `#!/bin/sh
while [ $# -gt 0 ]; do
  [ "$1" = --output.text.path ] && cp "`+filepath.Join(root, "findings")+`" "$2"
  shift
done
`, 0o755)
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "lint"))
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(root, "bin")+":"+os.Getenv("PATH"))
	return runScript(t, cmd)
}

const (
	dup1 = "a.go:1: 1-9 lines are duplicate of `b.go:1-9` (dupl)"
	dup2 = "b.go:1: 1-9 lines are duplicate of `a.go:1-9` (dupl)"
	vet  = "c.go:3:2: ineffectual assignment to x (ineffassign)"
)

// Any finding of the enforced linters fails; dupl's count fails only above
// the ceiling, and below it the script says to lower the ceiling.
func TestLintCeiling(t *testing.T) {
	code, out, errOut := runLint(t, []string{dup1, dup2}, "2\n")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Contains(t, out, "lint: clean; dupl 2 (ceiling 2)")

	code, out, errOut = runLint(t, []string{dup1, dup2}, "1\n")
	require.Equal(t, 1, code, out)
	require.Contains(t, errOut, "dupl finds 2 repeated blocks, above the ceiling of 1")
	require.Contains(t, errOut, dup2)

	code, out, errOut = runLint(t, []string{dup1, dup2}, "5\n")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "below the ceiling of 5: lower tools/lint/dupl-ceiling to 2")

	code, _, errOut = runLint(t, []string{dup1, vet}, "5\n")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, vet)
	require.NotContains(t, errOut, dup1, "only the enforced linters' findings are listed")
}
