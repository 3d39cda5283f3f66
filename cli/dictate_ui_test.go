//go:build linux && cgo

package cli

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio/capture/pulsetest"
	"github.com/harkapp/hark/internal/shared"
)

// TestDictateAgainstUI runs `hark ui` (its microphone a PulseAudio null
// sink) and drives its dictation with `hark dictate`.
func TestDictateAgainstUI(t *testing.T) {
	pulsetest.Start(t)
	data := t.TempDir()
	var stderr syncBuffer
	cancel, done := runUI(t, data, &stderr)
	require.Eventually(t, func() bool { return regexp.MustCompile(`listening on`).MatchString(stderr.String()) },
		shared.Wait(t, 30*time.Second), 20*time.Millisecond, stderr.String())

	dictate := func(cmd string) (string, string, error) {
		var out, errb bytes.Buffer
		r := NewRoot(&out, &errb)
		r.SetArgs([]string{"dictate", cmd, "--data-dir", data})
		err := r.Execute()
		return strings.TrimSpace(out.String()), strings.TrimSpace(errb.String()), err
	}
	out, _, err := dictate("status")
	require.NoError(t, err)
	require.Equal(t, "idle", out)
	_, _, err = dictate("cancel")
	require.ErrorContains(t, err, "not recording")
	_, state, err := dictate("start")
	require.NoError(t, err)
	require.Equal(t, "recording", state)
	out, _, err = dictate("status")
	require.NoError(t, err)
	require.Equal(t, "recording", out)
	_, state, err = dictate("cancel")
	require.NoError(t, err)
	require.Equal(t, "idle", state)
	recs, err := filepath.Glob(filepath.Join(data, "recordings", "*.wav"))
	require.NoError(t, err)
	require.Len(t, recs, 1, "the canceled recording is kept")

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(shared.Wait(t, 30*time.Second)):
		t.Fatal("hark ui did not stop")
	}
	_, _, err = dictate("status")
	require.ErrorContains(t, err, "not running")
}
