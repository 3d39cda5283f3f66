package app

import (
	"bytes"
	"log"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDataDirMadePrivate: a data folder (and its recordings) that other
// users may enter, as an older version or the user left it with mode 0755,
// is tightened to 0700 when the app opens it, and the log says so.
func TestDataDirMadePrivate(t *testing.T) {
	data := filepath.Join(t.TempDir(), "hark")
	rec := filepath.Join(data, "recordings")
	require.NoError(t, os.MkdirAll(rec, 0o755))
	require.NoError(t, os.Chmod(data, 0o755))
	require.NoError(t, os.Chmod(rec, 0o750))
	var logs bytes.Buffer
	log.SetOutput(&logs)
	t.Cleanup(func() { log.SetOutput(os.Stderr) })

	openApp(t, data, t.TempDir(), nil)
	for _, d := range []string{data, rec} {
		st, err := os.Stat(d)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), st.Mode().Perm(), d)
	}
	require.Contains(t, logs.String(), data+" was open to other users (mode 0755): made it private (0700)")
	require.Contains(t, logs.String(), rec+" was open to other users (mode 0750)")
}
