package cli

import (
	"bytes"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/control"
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

// The run called directly: the command goes to the data folder's socket,
// stop's transcript and status's state come back on Out, the others'
// state on ErrOut; the flags land in DictateOptions.
func TestRunDictate(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var got []string
	srv, err := control.Listen(dir, func(cmd string) control.Reply {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, cmd)
		return control.Reply{State: "idle", Text: "hello there"}
	})
	require.NoError(t, err)
	defer srv.Close()
	for _, tc := range []struct{ cmd, out, errOut string }{
		{"stop", "hello there\n", ""},
		{"status", "idle\nhello there\n", ""},
		{"toggle", "", "idle\n"},
	} {
		e, out, errOut := testEnv(t, "", "")
		require.NoError(t, runDictate(&DictateOptions{IOStreams: e.IOStreams, Command: tc.cmd, DataDir: dir}))
		require.Equal(t, tc.out, out.String(), tc.cmd)
		require.Equal(t, tc.errOut, errOut.String(), tc.cmd)
	}
	mu.Lock()
	require.Equal(t, []string{"stop", "status", "toggle"}, got)
	mu.Unlock()

	var opts *DictateOptions
	require.NoError(t, execute(newDictateCmd(func(o *DictateOptions) error { opts = o; return nil }), "cancel", "--data-dir", dir))
	require.Equal(t, "cancel", opts.Command)
	require.Equal(t, dir, opts.DataDir)
}
