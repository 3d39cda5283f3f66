package scripts

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/harkapp/hark"

// goList runs `go list` in the module root (the parent of scripts/) with
// extra environment and returns its lines.
func goList(t *testing.T, env []string, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir, cmd.Env = "..", append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// shipped are the builds Hark ships, as scripts/build-cli,
// scripts/build-macos-app and scripts/package-linux make them: linux and
// darwin, the CLI and the desktop app.
var shipped = []struct {
	name string
	env  []string
	tags string
}{
	{"linux cli", []string{"GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=1"}, ""},
	{"linux desktop", []string{"GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=1"}, "desktop,production"},
	{"darwin cli", []string{"GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0"}, ""},
	{"darwin desktop", []string{"GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0"}, "desktop,production"},
}

// testOnly reports whether a package exists for tests only: the standard
// testing packages, and any other package named like a test helper
// (…test, …testutil), such as engine/backends/backendstest.
func testOnly(path string, standard bool) bool {
	if standard {
		return path == "testing" || strings.HasPrefix(path, "testing/")
	}
	last := path[strings.LastIndex(path, "/")+1:]
	return strings.HasSuffix(last, "test") || strings.HasSuffix(last, "testutil")
}

// No shipped binary links test code: neither testing (which would also
// register its flags in the binary) nor a test-helper package. xgb v1.1.1
// has testing in a non-test file, so it is vendored without it under
// third_party/xgb.
func TestShippedBinariesLinkNoTestCode(t *testing.T) {
	for _, b := range shipped {
		deps := goList(t, b.env, "-e", "-deps", "-tags", b.tags, "-f", "{{.ImportPath}} {{.Standard}}", ".")
		require.Contains(t, deps, module+"/cli false", "%s: the list is the binary's", b.name)
		if b.tags != "" {
			require.Contains(t, deps, module+"/desktop false", "%s: the list is the app's", b.name)
		}
		var bad []string
		for _, l := range deps {
			path, std, _ := strings.Cut(l, " ")
			if testOnly(path, std == "true") {
				bad = append(bad, path)
			}
		}
		require.Empty(t, bad, "%s links test-only packages", b.name)
	}
}

func TestTestOnly(t *testing.T) {
	require.True(t, testOnly("testing", true))
	require.True(t, testOnly("testing/iotest", true))
	require.False(t, testOnly("internal/synctest", true), "the runtime's, not a test helper")
	require.True(t, testOnly(module+"/shaders/msltest", false))
	require.True(t, testOnly(module+"/internal/testutil", false))
	require.False(t, testOnly(module+"/engine/backends", false))
}

// The desktop app gets its models from engine/runtime only: no app
// package imports a backend directly.
func TestAppImportsNoBackend(t *testing.T) {
	for _, env := range [][]string{nil, {"GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0"}} {
		for _, l := range goList(t, env, "-f", `{{.ImportPath}}: {{join .Imports " "}}`, "./app/...") {
			for _, imp := range strings.Fields(l)[1:] {
				require.NotContains(t, []string{module + "/engine/cpu", module + "/metal"}, imp, l)
			}
		}
	}
}

// imports lists each package of the module under pattern with its imports
// (tests excluded), on linux and on darwin. Commands (package main: the
// binary, generators, tools) sit above every layer: withCommands false
// leaves them out.
func imports(t *testing.T, pattern string, withCommands bool) map[string][]string {
	t.Helper()
	m := map[string][]string{}
	for _, env := range [][]string{nil, {"GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0"}} {
		for _, l := range goList(t, env, "-e", "-f", `{{.ImportPath}} {{.Name}} {{join .Imports " "}}`, pattern) {
			f := strings.Fields(l)
			if len(f) < 2 || (f[1] == "main" && !withCommands) {
				continue
			}
			m[f[0]] = append(m[f[0]], f[2:]...)
		}
	}
	return m
}

// under reports whether path is the module's package dir or one below it.
func under(path, dir string) bool {
	p := module + "/" + dir
	return path == p || strings.HasPrefix(path, p+"/")
}

// Nothing is imported upward: the engine and audio know nothing of the
// GPU backends, the app or the server; the server and the macOS packages
// share code with the app through internal/, not by importing app/.
func TestNoUpwardImports(t *testing.T) {
	// The layers of README.md's Architecture picture: entry (main, cli,
	// desktop), services and wiring, GPU backends, engine, base.
	entry := []string{"cli", "desktop"}
	services := append([]string{"app", "serve", "drivers", "macos"}, entry...)
	gpu := append([]string{"metal", "cuda", "shaders"}, services...)
	rules := []struct {
		from      string
		forbidden []string
	}{
		{"audio", append([]string{"engine"}, gpu...)},
		{"engine", gpu},
		{"shaders", services},
		{"metal", services},
		{"cuda", services},
		{"drivers", append([]string{"app", "serve", "macos"}, entry...)},
		{"serve", append([]string{"app", "macos"}, entry...)},
		{"macos", append([]string{"app", "serve", "drivers"}, entry...)},
		{"app", append([]string{"drivers", "metal", "cuda"}, entry...)},
		{"internal", []string{"app", "serve", "cli", "desktop"}},
	}
	for pkg, imps := range imports(t, "./...", false) {
		for _, r := range rules {
			if !under(pkg, r.from) {
				continue
			}
			for _, imp := range imps {
				for _, f := range r.forbidden {
					require.False(t, under(imp, f), "%s imports %s, above it", pkg, imp)
				}
			}
		}
	}
}

// No production package imports a test-only package: one named like a
// test helper, or one that imports testing itself (internal/shared, the
// tests' data and wait helpers). A test helper may use another. (The
// shipped binaries' own check above also catches a production package
// that imports testing directly.) The CUDA generator, for one, uses
// shaders/msl, not the executor shaders/msltest.
func TestNoProductionImportOfTestPackages(t *testing.T) {
	all := imports(t, "./...", true)
	helper := map[string]bool{}
	for pkg, imps := range all {
		helper[pkg] = testOnly(pkg, false) || slices.Contains(imps, "testing")
	}
	for pkg, imps := range all {
		if helper[pkg] {
			continue
		}
		for _, imp := range imps {
			std := !strings.Contains(strings.Split(imp, "/")[0], ".")
			require.False(t, helper[imp] || testOnly(imp, std), "%s imports the test-only %s", pkg, imp)
		}
	}
}

// One Objective-C helper, internal/ns, serves metal/ and macos/: only it
// makes autorelease pools and opens Cocoa frameworks by path (engine/blas
// opens Accelerate, a C library, with its BLAS fallbacks).
func TestOneObjectiveCHelper(t *testing.T) {
	var owners []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ".." && (d.Name() == "node_modules" || d.Name() == "third_party" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), `"NSAutoreleasePool"`) || strings.Contains(string(b), `".framework/"`) {
			owners = append(owners, filepath.ToSlash(path))
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []string{"../internal/ns/ns_darwin.go"}, owners)
}
