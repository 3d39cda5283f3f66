package control

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

func TestControlSocket(t *testing.T) {
	dir := t.TempDir()
	_, err := Send(dir, "status", time.Second)
	require.ErrorIs(t, err, ErrNotRunning, "no app: a clear error")
	require.Contains(t, err.Error(), dir)

	// A dead app's socket file is replaced.
	require.NoError(t, os.WriteFile(filepath.Join(dir, SocketName), nil, 0o600))
	var mu sync.Mutex
	var got []string
	s, err := Listen(dir, func(cmd string) Reply {
		mu.Lock()
		got = append(got, cmd)
		mu.Unlock()
		if cmd == "cancel" {
			return Reply{State: "idle", Error: "dictation is not recording"}
		}
		return Reply{State: "recording", Text: "hi"}
	})
	require.NoError(t, err)
	fi, err := os.Stat(s.Path())
	require.NoError(t, err)
	require.Equal(t, os.ModeSocket|0o600, fi.Mode()&(os.ModeSocket|os.ModePerm), "owner-only")

	r, err := Send(dir, "toggle", time.Second)
	require.NoError(t, err)
	require.Equal(t, Reply{State: "recording", Text: "hi"}, r)
	_, err = Send(dir, "cancel", time.Second)
	require.EqualError(t, err, "dictation is not recording")
	_, err = Send(dir, "rm -rf", time.Second)
	require.ErrorContains(t, err, "unknown command")
	// A meeting ID after the commands that take one, and nothing else.
	_, err = Send(dir, "meeting-resume 20260102-150405-1", time.Second)
	require.NoError(t, err)
	_, err = Send(dir, "meeting-finish", time.Second)
	require.NoError(t, err)
	for _, bad := range []string{"meeting-resume ../x", "meeting-finish -x", "meeting-resume a b", "meeting-finish " + strings.Repeat("1", maxID+1)} {
		_, err = Send(dir, bad, time.Second)
		require.ErrorContains(t, err, "is not a meeting ID", bad)
	}
	_, err = Send(dir, "meeting-start 20260102-150405", time.Second)
	require.ErrorContains(t, err, "unknown command")
	mu.Lock()
	require.Equal(t, []string{"toggle", "cancel", "meeting-resume 20260102-150405-1", "meeting-finish"}, got, "unknown commands never reach the app")
	mu.Unlock()

	// A request longer than any command, or with no newline, is refused
	// without waiting for more.
	c, err := net.Dial("unix", s.Path())
	require.NoError(t, err)
	_, err = c.Write([]byte(strings.Repeat("x", 4096)))
	require.NoError(t, err)
	c.SetReadDeadline(time.Now().Add(shared.Wait(t, 2*time.Second)))
	b := make([]byte, 256)
	n, _ := c.Read(b)
	require.Contains(t, string(b[:n]), "bad request")
	c.Close()

	require.NoError(t, s.Close())
	_, err = os.Stat(s.Path())
	require.ErrorIs(t, err, os.ErrNotExist, "the socket goes with the app")
	_, err = Send(dir, "status", time.Second)
	require.ErrorIs(t, err, ErrNotRunning)
}
