package cli

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app"
	"github.com/harkapp/hark/app/control"
)

// `hark hark://dictate/toggle` (what the Linux desktop entry runs for a
// hark: link) reaches the running app's control socket as `hark dictate
// toggle`; the commands a link may not give, and URLs that are not
// dictation URLs, are refused before anything is sent.
func TestDictationURL(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var got []string
	srv, err := control.Listen(dir, func(cmd string) control.Reply {
		mu.Lock()
		got = append(got, cmd)
		mu.Unlock()
		return control.Reply{State: "recording"}
	})
	require.NoError(t, err)
	defer srv.Close()
	t.Setenv(app.EnvDataDir, dir)

	for _, cmd := range []string{"toggle", "start", "stop", "cancel"} {
		var out, errOut bytes.Buffer
		code := run([]string{"hark://dictate/" + cmd}, strings.NewReader(""), &out, &errOut)
		require.Equal(t, 0, code, "%s: %s", cmd, errOut.String())
	}
	for _, bad := range []string{"hark://dictate/paste-last", "hark://dictate/status", "hark://evil/toggle", "HARK://dictate/toggle?x=1"} {
		var out, errOut bytes.Buffer
		code := run([]string{bad}, strings.NewReader(""), &out, &errOut)
		require.Equal(t, 1, code, bad)
		require.Contains(t, errOut.String(), "is not a dictation URL", bad)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"toggle", "start", "stop", "cancel"}, got)
}
