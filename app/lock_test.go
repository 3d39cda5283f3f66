package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOneInstancePerDataDir: a second app on the same data folder is
// refused before recovery, so the first one's recording stays recording;
// the folder and database are the user's only.
func TestOneInstancePerDataDir(t *testing.T) {
	data := filepath.Join(t.TempDir(), "hark")
	a := openApp(t, data, t.TempDir(), nil)
	it, err := a.History.BeginRecording()
	require.NoError(t, err)

	_, err = New(Config{DataDir: data, ModelsDir: t.TempDir()})
	require.ErrorContains(t, err, "another Hark is already using the data folder")
	got, err := a.History.Get(it.ID)
	require.NoError(t, err)
	require.Equal(t, it.Status, got.Status, "the second instance marked the first one's item")

	for p, mode := range map[string]os.FileMode{data: 0o700, filepath.Join(data, "recordings"): 0o700, filepath.Join(data, "hark.db"): 0o600} {
		st, err := os.Stat(p)
		require.NoError(t, err)
		require.Equal(t, mode, st.Mode().Perm(), p)
	}

	require.NoError(t, a.Close())
	b, err := New(Config{DataDir: data, ModelsDir: t.TempDir()})
	require.NoError(t, err, "the lock goes with the first app")
	require.NoError(t, b.Close())
}
