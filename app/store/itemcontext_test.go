package store

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A version-1 database gains the mode and prompt-term columns with their
// defaults; the context survives UpdateItem.
func TestItemContextMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hark.db")
	s := open(t, path)
	// Back to version 1, as a database from before migration 2.
	_, err := s.db.Exec(`ALTER TABLE items DROP COLUMN mode; ALTER TABLE items DROP COLUMN prompt_terms; PRAGMA user_version = 1`)
	require.NoError(t, err)
	_, err = s.db.Exec(`INSERT INTO items(kind, created_at, updated_at, status) VALUES('dictation', 1, 1, 'done')`)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	s = open(t, path)
	v, err := s.Version()
	require.NoError(t, err)
	require.Equal(t, len(migrations), v)
	old, err := s.Item(1)
	require.NoError(t, err)
	require.Equal(t, "", old.Mode)
	require.Equal(t, "[]", old.PromptTerms)

	require.NoError(t, s.SetItemContext(1, "Email", `["Kubernetes"]`))
	old.Text = "changed"
	require.NoError(t, s.UpdateItem(old))
	got, err := s.Item(1)
	require.NoError(t, err)
	require.Equal(t, "changed", got.Text)
	require.Equal(t, "Email", got.Mode)
	require.Equal(t, `["Kubernetes"]`, got.PromptTerms)
	require.Error(t, s.SetItemContext(99, "x", "[]"))
}
