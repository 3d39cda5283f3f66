package cli

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDictateNoApp: without a running app, a clear message and a
// non-zero exit.
func TestDictateNoApp(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	root := NewRoot(&out, io.Discard)
	root.SetArgs([]string{"dictate", "toggle", "--data-dir", dir})
	err := root.Execute()
	require.ErrorContains(t, err, "Hark is not running")
	require.ErrorContains(t, err, dir)
	require.Empty(t, out.String())
	require.Equal(t, 1, Execute([]string{"dictate", "status", "--data-dir", dir}))

	root = NewRoot(io.Discard, io.Discard)
	root.SetArgs([]string{"dictate", "format-disk", "--data-dir", dir})
	require.ErrorContains(t, root.Execute(), "want one of: start, stop, toggle, cancel, status")
}
