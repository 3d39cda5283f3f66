package shared

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A kept file outlives the temp folders of the test that kept it, under
// $HARK_TEST_FAILURES (default $TMPDIR/hark-test-failures); a file never
// written gives "".
func TestKeepOnFailure(t *testing.T) {
	root := t.TempDir()
	t.Setenv(FailuresEnv, root)
	var kept string
	t.Run("failing/step", func(t *testing.T) {
		shot := filepath.Join(t.TempDir(), "failure.png")
		require.NoError(t, os.WriteFile(shot, []byte("\x89PNG"), 0o644))
		kept = KeepOnFailure(t, shot)
		require.Empty(t, KeepOnFailure(t, filepath.Join(t.TempDir(), "never-written.png")))
	})
	require.True(t, strings.HasPrefix(kept, root+string(filepath.Separator)+"TestKeepOnFailure_failing_step-"), kept)
	require.Equal(t, "failure.png", filepath.Base(kept))
	b, err := os.ReadFile(kept)
	require.NoError(t, err, "the kept file is gone with the test's temp folder")
	require.Equal(t, "\x89PNG", string(b))

	t.Setenv(FailuresEnv, "")
	shot := filepath.Join(t.TempDir(), "log.txt")
	require.NoError(t, os.WriteFile(shot, []byte("x"), 0o644))
	kept = KeepOnFailure(t, shot)
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(kept)) })
	require.Equal(t, filepath.Join(os.TempDir(), "hark-test-failures"), filepath.Dir(filepath.Dir(kept)))
}
