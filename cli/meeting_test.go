package cli

import (
	"bytes"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/control"
)

// TestMeetingCommand: `hark meeting start|stop|status|resume|finish [ID]`
// sends the socket's meeting-* commands (resume and finish with the ID)
// and prints the state and status; a wrong subcommand, an ID where none
// is taken or one that is not an ID, or no running app, is a clear
// error.
func TestMeetingCommand(t *testing.T) {
	dir := t.TempDir()
	root := NewRoot(io.Discard, io.Discard)
	root.SetArgs([]string{"meeting", "status", "--data-dir", dir})
	require.ErrorContains(t, root.Execute(), "Hark is not running")
	root = NewRoot(io.Discard, io.Discard)
	root.SetArgs([]string{"meeting", "toggle", "--data-dir", dir})
	require.ErrorContains(t, root.Execute(), "want one of: start, stop, status, resume, finish")
	for _, bad := range [][]string{{"start", "20260102-150405"}, {"resume", "../x"}, {"finish", "a", "b"}} {
		root = NewRoot(io.Discard, io.Discard)
		root.SetArgs(append(append([]string{"meeting"}, bad...), "--data-dir", dir))
		require.Error(t, root.Execute(), "%q", bad)
	}

	var mu sync.Mutex
	var got []string
	srv, err := control.Listen(dir, func(cmd string) control.Reply {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, cmd)
		if cmd == "meeting-start" {
			return control.Reply{State: "recording", Error: "a meeting is already recording"}
		}
		return control.Reply{State: "idle", Text: "notes: /x/notes.md"}
	})
	require.NoError(t, err)
	defer srv.Close()
	var out bytes.Buffer
	root = NewRoot(&out, io.Discard)
	root.SetArgs([]string{"meeting", "stop", "--data-dir", dir})
	require.NoError(t, root.Execute())
	require.Equal(t, "idle\nnotes: /x/notes.md\n", out.String())
	root = NewRoot(io.Discard, io.Discard)
	root.SetArgs([]string{"meeting", "start", "--data-dir", dir})
	require.ErrorContains(t, root.Execute(), "already recording")
	root = NewRoot(io.Discard, io.Discard)
	root.SetArgs([]string{"meeting", "resume", "20260102-150405", "--data-dir", dir})
	require.NoError(t, root.Execute())
	root = NewRoot(io.Discard, io.Discard)
	root.SetArgs([]string{"meeting", "finish", "--data-dir", dir})
	require.NoError(t, root.Execute())
	mu.Lock()
	require.Equal(t, []string{"meeting-stop", "meeting-start", "meeting-resume 20260102-150405", "meeting-finish"}, got)
	mu.Unlock()
}
