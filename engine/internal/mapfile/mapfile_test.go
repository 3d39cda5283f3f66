package mapfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/mapped"
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

// OpenParsed hands the bytes to parse and keeps the map; a parse error
// releases it and names the file. Release drops the slices, closes once.
func TestOpenParsedAndRelease(t *testing.T) {
	p := filepath.Join(t.TempDir(), "model.bin")
	require.NoError(t, os.WriteFile(p, []byte("weights"), 0o644))
	got, m, err := OpenParsed(p, func(b []byte) ([]byte, error) { return b[:3], nil })
	require.NoError(t, err)
	require.Equal(t, []byte("wei"), got)
	dropped := 0
	require.NoError(t, Release(&m, func() { dropped++ }))
	require.Nil(t, m)
	require.NoError(t, Release(&m, func() { dropped++ }), "a second release does nothing")
	require.Equal(t, 1, dropped)

	_, m, err = OpenParsed(p, func([]byte) (int, error) { return 0, errors.New("bad magic") })
	require.EqualError(t, err, p+": bad magic")
	require.Nil(t, m)
	_, _, err = OpenParsed(filepath.Join(t.TempDir(), "missing"), func([]byte) (int, error) { return 0, nil })
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestMapsAreRegistered: a mapped file is known to engine/mapped while it
// is open (Metal wraps its pages without a copy), and forgotten at Close.
func TestMapsAreRegistered(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m")
	require.NoError(t, os.WriteFile(p, make([]byte, 10000), 0o644))
	f, err := Open(p)
	require.NoError(t, err)
	data := f.Data
	_, _, ok := mapped.Bounds(data[100:200])
	require.Equal(t, f.Mapped(), ok)
	require.NoError(t, f.Close())
	_, _, ok = mapped.Bounds(data[100:200])
	require.False(t, ok)
}
