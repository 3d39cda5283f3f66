//go:build linux && cgo

package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio/capture/pulsetest"
)

// TestDictateAgainstUI runs `hark ui` (its microphone a PulseAudio null
// sink) and drives its dictation with `hark dictate`.
func TestDictateAgainstUI(t *testing.T) {
	pulsetest.Start(t)
	assets := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(assets, "index.html"), []byte("<title>Hark</title>"), 0o644))
	data := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	root := NewRoot(io.Discard, &stderr)
	root.SetArgs([]string{"ui", "--addr", "127.0.0.1:0", "--data-dir", data, "--models-dir", t.TempDir(), "--assets", assets})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	require.Eventually(t, func() bool { return regexp.MustCompile(`listening on`).MatchString(stderr.String()) },
		30*time.Second, 20*time.Millisecond, stderr.String())

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
	case <-time.After(30 * time.Second):
		t.Fatal("hark ui did not stop")
	}
	_, _, err = dictate("status")
	require.ErrorContains(t, err, "not running")
}
