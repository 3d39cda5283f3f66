package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOddFolderName: a data folder named with URI characters opens at that
// exact path with every pragma applied, and the file is the user's only.
func TestOddFolderName(t *testing.T) {
	for _, name := range []string{"a?mode=ro", "b#frag", "c%20d", "e f&g=h"} {
		dir := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.Mkdir(dir, 0o700))
		path := filepath.Join(dir, "hark.db")
		s, err := Open(path)
		require.NoError(t, err, name)
		var mode string
		require.NoError(t, s.db.QueryRow("PRAGMA journal_mode").Scan(&mode))
		require.Equal(t, "wal", mode, name)
		var fk, busy, sync int
		require.NoError(t, s.db.QueryRow("PRAGMA foreign_keys").Scan(&fk))
		require.NoError(t, s.db.QueryRow("PRAGMA busy_timeout").Scan(&busy))
		require.NoError(t, s.db.QueryRow("PRAGMA synchronous").Scan(&sync))
		require.Equal(t, []int{1, 5000, 2}, []int{fk, busy, sync}, name)
		_, err = s.Item(1)
		require.ErrorIs(t, err, ErrNotFound)
		require.NoError(t, s.Close())
		st, err := os.Stat(path)
		require.NoError(t, err, "the database is at the folder's exact path")
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
		ents, _ := os.ReadDir(filepath.Dir(dir))
		require.Len(t, ents, 1, "no file beside the folder (a cut-short name)")
	}
}
