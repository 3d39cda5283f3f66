package cli

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shareddir"
)

// goList runs `go list` in the module root with extra environment.
func goList(t *testing.T, env []string, args ...string) []string {
	t.Helper()
	root, err := shareddir.ModuleRoot()
	require.NoError(t, err)
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir, cmd.Env = root, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// The hark binary does not link the testing package: none of Hark's
// packages in it imports testing. On macOS (the shipped binary) nothing
// does; on Linux the X11 library github.com/jezek/xgb v1.1.1 still does
// (testingTools.go, renamed to a _test file upstream in v1.3.1, which the
// module proxy here does not have yet).
func TestBinaryDoesNotLinkTesting(t *testing.T) {
	darwin := goList(t, []string{"GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0"}, "-deps", ".")
	require.NotContains(t, darwin, "testing")
	require.Contains(t, darwin, "github.com/harkapp/hark/cli", "the list is the binary's")

	importers := goList(t, nil, "-deps", "-f", `{{.ImportPath}}{{range .Imports}}{{if eq . "testing"}} imports-testing{{end}}{{end}}`, ".")
	var bad []string
	for _, l := range importers {
		if p, ok := strings.CutSuffix(l, " imports-testing"); ok && p != "github.com/jezek/xgb" {
			bad = append(bad, p)
		}
	}
	require.Empty(t, bad, "packages of the hark binary that import testing")
}

// The desktop app gets its models from engine/runtime only: no app
// package imports a backend directly.
func TestAppImportsNoBackend(t *testing.T) {
	for _, env := range [][]string{nil, {"GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0"}} {
		for _, l := range goList(t, env, "-f", `{{.ImportPath}}: {{join .Imports " "}}`, "./app/...") {
			for _, imp := range strings.Fields(l)[1:] {
				require.NotContains(t, []string{"github.com/harkapp/hark/engine/cpu", "github.com/harkapp/hark/metal"}, imp, l)
			}
		}
	}
}
