package shared

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harkapp/hark/internal/shareddir"
)

// Fixture returns a temporary copy of the repository's testdata/NAME folder
// with every .gz file unpacked (reference outputs Hark generated with other
// implementations, too new to be in the shared kit). $HARK_FIXTURES replaces
// the testdata folder for test binaries run away from the source tree. The
// test fails when the folder is missing.
func Fixture(t testing.TB, name string) string {
	t.Helper()
	root := os.Getenv("HARK_FIXTURES")
	if root == "" {
		mod, err := shareddir.ModuleRoot()
		if err != nil {
			t.Fatal(err)
		}
		root = filepath.Join(mod, "testdata")
	}
	src := filepath.Join(root, name)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatalf("test fixture missing: %v", err)
	}
	dst := t.TempDir()
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		if err := unpack(filepath.Join(src, e.Name()), dst); err != nil {
			t.Fatalf("test fixture %s: %v", e.Name(), err)
		}
	}
	return dst
}

// unpack copies file into dir, gunzipping it (and dropping .gz) when it ends in .gz.
func unpack(file, dir string) error {
	in, err := os.Open(file)
	if err != nil {
		return err
	}
	defer in.Close()
	var r io.Reader = in
	name := filepath.Base(file)
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(in)
		if err != nil {
			return err
		}
		defer zr.Close()
		r, name = zr, strings.TrimSuffix(name, ".gz")
	}
	out, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
