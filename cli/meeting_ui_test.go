//go:build linux && cgo

package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/meeting"
	"github.com/harkapp/hark/audio/capture/pulsetest"
	"github.com/harkapp/hark/internal/shared"
)

// TestMeetingResumeFinishAgainstUI runs `hark ui` (its devices PulseAudio
// null sinks) on a data folder holding two meetings a killed process left
// recording, and answers its offers with `hark meeting`: status lists
// both; resume without an ID asks which; one is resumed into its own
// folder and stopped; the other is finished; a finished or unknown one is
// a clear error.
func TestMeetingResumeFinishAgainstUI(t *testing.T) {
	pa := pulsetest.Start(t)
	pa.AddMic(t)
	data := t.TempDir()
	root := filepath.Join(data, "meetings")
	var ids []string
	for i := range 2 {
		r, err := meeting.Start(meeting.RecorderConfig{Root: root}, time.Now().Add(-time.Duration(2-i)*time.Hour))
		require.NoError(t, err)
		r.Write(make([]float32, 2*16000)) // 1 s; r is abandoned, as a kill leaves it
		ids = append(ids, r.ID())
	}
	older, newer := ids[0], ids[1]
	models := t.TempDir()
	require.NoError(t, os.Link(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"), filepath.Join(models, "kit.bin")))
	var stderr syncBuffer
	cancel, done := runUIModels(t, data, models, &stderr)
	require.Eventually(t, func() bool { return regexp.MustCompile(`listening on`).MatchString(stderr.String()) },
		shared.Wait(t, 30*time.Second), 20*time.Millisecond, stderr.String())

	hark := func(args ...string) (string, error) {
		var out bytes.Buffer
		r := NewRoot(&out, &bytes.Buffer{})
		r.SetArgs(append(append([]string{"meeting"}, args...), "--data-dir", data))
		err := r.Execute()
		return strings.TrimSpace(out.String()), err
	}
	out, err := hark("status")
	require.NoError(t, err)
	require.Contains(t, out, "idle\n")
	require.Contains(t, out, "cut short by a crash: meeting "+newer)
	require.Contains(t, out, "cut short by a crash: meeting "+older)
	_, err = hark("resume")
	require.ErrorContains(t, err, "2 meetings were cut short ("+newer+", "+older+"): name one")
	_, err = hark("finish", "20200101-000000")
	require.ErrorContains(t, err, "no meeting 20200101-000000")

	out, err = hark("resume", older)
	require.NoError(t, err)
	require.Contains(t, out, "recording\nmeeting "+older+", 1s recorded")
	require.NotContains(t, out, "meeting "+older+", at", "no longer offered")
	_, err = hark("resume", newer)
	require.ErrorContains(t, err, "meeting "+older+" is recording: stop it before resuming another")
	out, err = hark("stop")
	require.NoError(t, err)
	require.Contains(t, out, "notes: "+filepath.Join(meeting.Dir(root, older), "notes.md"), "the same folder")
	m, err := meeting.Read(root, older)
	require.NoError(t, err)
	require.Equal(t, meeting.StateFinished, m.State)
	require.GreaterOrEqual(t, m.Duration, 1.0)
	_, err = hark("resume", older)
	require.ErrorContains(t, err, "finished already")

	out, err = hark("finish")
	require.NoError(t, err)
	require.Contains(t, out, "notes: "+filepath.Join(meeting.Dir(root, newer), "notes.md"))
	require.NotContains(t, out, "cut short")
	m, err = meeting.Read(root, newer)
	require.NoError(t, err)
	require.Equal(t, meeting.StateFinished, m.State)
	require.True(t, m.Recovered)
	_, err = hark("finish", newer)
	require.ErrorContains(t, err, "finished already")

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(shared.Wait(t, time.Minute)): // the final passes end first
		t.Fatalf("hark ui did not stop: %s", stderr.String())
	}
}
