package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestInstallCommand(t *testing.T) {
	root := t.TempDir()
	exe := filepath.Join(root, "Hark.app", "Contents", "MacOS", "hark")
	require.NoError(t, os.MkdirAll(filepath.Dir(exe), 0o755))
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
	home := filepath.Join(root, "home")
	local := filepath.Join(home, ".local", "bin")
	other := filepath.Join(root, "other")
	require.NoError(t, os.MkdirAll(local, 0o755))
	require.NoError(t, os.MkdirAll(other, 0o755))
	path := other + string(os.PathListSeparator) + local
	c := command{exe: func() (string, error) { return exe, nil }, path: func() string { return path }, home: func() (string, error) { return home, nil }}

	st := c.status()
	require.False(t, st.OnPath)
	require.Equal(t, filepath.Join(local, "hark"), st.Path, "~/.local/bin: on PATH and writable (/usr/local/bin is not on this PATH)")
	st, err := c.install()
	require.NoError(t, err)
	require.True(t, st.OnPath)
	link, err := os.Readlink(filepath.Join(local, "hark"))
	require.NoError(t, err)
	require.Equal(t, exe, link)
	st, err = c.install()
	require.NoError(t, err, "installing again is a no-op")
	require.True(t, st.OnPath)

	// Another hark earlier on PATH is reported, never replaced.
	require.NoError(t, os.WriteFile(filepath.Join(other, "hark"), []byte("x"), 0o755))
	st = c.status()
	require.False(t, st.OnPath)
	require.Equal(t, filepath.Join(other, "hark"), st.Path)
	_, err = c.install()
	require.Error(t, err)
	b, _ := os.ReadFile(filepath.Join(other, "hark"))
	require.Equal(t, "x", string(b))

	// No writable preferred folder on PATH: a clear error.
	c.path = func() string { return other + "-missing" }
	_, err = c.install()
	require.ErrorContains(t, err, "on PATH and writable")
}
