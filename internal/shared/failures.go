package shared

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// FailuresEnv overrides where KeepOnFailure puts what a failed test
// leaves for a person to look at (default $TMPDIR/hark-test-failures).
const FailuresEnv = "HARK_TEST_FAILURES"

// KeepOnFailure copies file (a failure screenshot, a log) out of the
// test's temp folders, which are deleted when the test ends, to
// $HARK_TEST_FAILURES/<test>-<time>/<base name of file> and returns that
// path, for the failure message to print. It returns "" when file does not
// exist (the failure came before anything was written) or cannot be kept,
// saying why in the log.
func KeepOnFailure(t testing.TB, file string) string {
	t.Helper()
	src, err := os.Open(file)
	if err != nil {
		t.Logf("nothing to keep: %v", err)
		return ""
	}
	defer src.Close()
	root := os.Getenv(FailuresEnv)
	if root == "" {
		root = filepath.Join(os.TempDir(), "hark-test-failures")
	}
	name := regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(t.Name(), "_")
	dir := filepath.Join(root, name+"-"+time.Now().UTC().Format("20060102T150405.000"))
	dst := filepath.Join(dir, filepath.Base(file))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("cannot keep %s: %v", file, err)
		return ""
	}
	out, err := os.Create(dst)
	if err == nil {
		_, err = io.Copy(out, src)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Logf("cannot keep %s: %v", file, err)
		return ""
	}
	return dst
}
