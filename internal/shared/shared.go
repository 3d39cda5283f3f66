// Package shared locates the shared test data (models, audio, reference
// outputs) that lives outside the repository. Tests fail, never skip, when
// it is missing.
package shared

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/harkapp/hark/internal/shareddir"
)

// Root returns the test-data directory: $HARK_TESTDATA, or ../shared
// relative to the module root (the directory holding go.mod).
func Root() (string, error) { return shareddir.Root() }

// Dir returns the test-data root, failing the test when it is missing.
func Dir(t testing.TB) string {
	t.Helper()
	d, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Path joins elements onto the test-data root and fails the test if the
// file does not exist.
func Path(t testing.TB, elem ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{Dir(t)}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("test data missing: %v", err)
	}
	return p
}
