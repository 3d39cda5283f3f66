package mapfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a")
	require.NoError(t, os.WriteFile(p, []byte("hello"), 0o644))
	f, err := Open(p)
	require.NoError(t, err)
	require.Equal(t, "hello", string(f.Data))
	require.NoError(t, f.Close())
	require.Nil(t, f.Data)

	e := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(e, nil, 0o644))
	f, err = Open(e)
	require.NoError(t, err)
	require.Empty(t, f.Data)
	require.NoError(t, f.Close())

	_, err = Open(dir)
	require.ErrorContains(t, err, "not a regular file")
	_, err = Open(filepath.Join(dir, "missing"))
	require.Error(t, err)
}
