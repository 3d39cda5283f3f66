package models

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStoreResolve(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tiny.en.bin"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "smol.gguf"), []byte("xy"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644))

	p, err := s.Resolve("tiny.en")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "tiny.en.bin"), p)
	p, err = s.Resolve(filepath.Join(dir, "smol.gguf"))
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "smol.gguf"), p)

	_, err = s.Resolve("missing")
	require.ErrorIs(t, err, ErrNotFound)
	_, err = s.Resolve("../etc/passwd")
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = s.Resolve("no/such/file.bin")
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = s.Path("..")
	require.Error(t, err)
	_, err = s.Resolve("")
	require.Error(t, err)

	list, err := s.List()
	require.NoError(t, err)
	require.Equal(t, []Entry{{"smol", filepath.Join(dir, "smol.gguf"), 2}, {"tiny.en", filepath.Join(dir, "tiny.en.bin"), 1}}, list)
	empty, err := Open(filepath.Join(dir, "none"))
	require.NoError(t, err)
	list, err = empty.List()
	require.NoError(t, err)
	require.Empty(t, list)
}

func TestValidateName(t *testing.T) {
	for _, ok := range []string{"tiny.en", "qwen2.5-0.5b-instruct-q4_k_m", "a"} {
		require.NoError(t, ValidateName(ok), ok)
	}
	for _, bad := range []string{"", ".hidden", "../x", "a/b", `a\b`, "a..b", "-x", "x y"} {
		require.Error(t, ValidateName(bad), bad)
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv(EnvDir, "/tmp/hark-models-test")
	d, err := DefaultDir()
	require.NoError(t, err)
	require.Equal(t, "/tmp/hark-models-test", d)
	t.Setenv(EnvDir, "")
	t.Setenv("XDG_DATA_HOME", "/data")
	d, err = DefaultDir()
	require.NoError(t, err)
	if runtime.GOOS != "darwin" {
		require.Equal(t, "/data/hark/models", d)
	}
}
