// Package shareddir finds the shared test data (models, audio, reference
// outputs) outside the repository. It does not import testing, so commands
// (hark bench) can use it without linking the test framework into the
// binary; tests use internal/shared.
package shareddir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Root returns the test-data directory: $HARK_TESTDATA, or ../shared
// relative to the module root (the directory holding go.mod).
func Root() (string, error) {
	if d := os.Getenv("HARK_TESTDATA"); d != "" {
		return checkDir(d)
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	return checkDir(filepath.Join(root, "..", "shared"))
}

// ModuleRoot walks up from the working directory to the directory with go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("shared: no go.mod above the working directory")
		}
		dir = parent
	}
}

func checkDir(d string) (string, error) {
	abs, err := filepath.Abs(d)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil || !st.IsDir() {
		return "", fmt.Errorf("shared: %s is not a directory: set HARK_TESTDATA to the shared test data (models, audio, kits)", abs)
	}
	return abs, nil
}
