//go:build linux && cgo

package app

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio/capture/pulsetest"

	"github.com/harkapp/hark/internal/shared"
)

// recordingStreams counts the sound server's capture streams: the input
// device is open exactly when Hark has one.
func recordingStreams(t *testing.T, pa *pulsetest.Server) int {
	t.Helper()
	out, err := pa.Pactl("list", "short", "source-outputs")
	require.NoError(t, err)
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return n
}

// dictateOnce records for a moment through the app (no speech is played:
// the transcription's "no speech" error is expected and beside the point).
func dictateOnce(t *testing.T, a *App, pa *pulsetest.Server, whileOpen func()) {
	t.Helper()
	require.NoError(t, a.Dictation.Start())
	require.Equal(t, 1, recordingStreams(t, pa), "the device is open while recording")
	if whileOpen != nil {
		whileOpen()
	}
	time.Sleep(300 * time.Millisecond)
	_, _ = a.Dictation.Stop()
}

// TestMicClosedWhenIdle proves the microphone policy against a real sound
// server: by default the device opens at the hotkey and closes the set
// time after the recording (kept open in between, so back-to-back
// dictations reuse it); "Keep the microphone ready" keeps it open; a new
// default input is used by the next dictation; a device lost mid-recording
// is replaced by the default and the user is told.
func TestMicClosedWhenIdle(t *testing.T) {
	pa := pulsetest.Start(t)
	ev := newEvents()
	a := openApp(t, t.TempDir(), testModelsDir(t), ev)
	cr := NewCaptureRecorder(nil)
	t.Cleanup(func() { cr.Close() })
	a.SetRecorder(cr)

	set, err := a.Settings.Get()
	require.NoError(t, err)
	require.False(t, set.KeepMicReady, "the microphone is off when idle by default")
	require.Equal(t, 10, set.MicCloseSeconds)
	set.MicCloseSeconds = 1
	set, err = a.Settings.Update(set)
	require.NoError(t, err)
	require.NoError(t, cr.SetMicPolicy(set.InputDevice, MicOptionsOf(set))) // what the desktop app does at start-up
	require.Zero(t, recordingStreams(t, pa), "nothing opens the device before the first dictation")

	dictateOnce(t, a, pa, nil)
	require.Equal(t, 1, recordingStreams(t, pa), "the device lingers after a recording")
	require.Eventually(t, func() bool { return recordingStreams(t, pa) == 0 }, shared.Wait(t, 5*time.Second), 50*time.Millisecond,
		"the device was not closed after MicCloseSeconds")
	require.False(t, cr.MicOpen())
	time.Sleep(1500 * time.Millisecond)
	require.Zero(t, recordingStreams(t, pa), "the device stays closed between dictations")

	// Back to back: the second dictation finds the device open.
	dictateOnce(t, a, pa, nil)
	dictateOnce(t, a, pa, nil)
	require.Eventually(t, func() bool { return recordingStreams(t, pa) == 0 }, shared.Wait(t, 5*time.Second), 50*time.Millisecond)

	// Opt in: open now, and open after dictations.
	set.KeepMicReady = true
	set, err = a.Settings.Update(set)
	require.NoError(t, err)
	require.NoError(t, cr.SetMicPolicy(set.InputDevice, MicOptionsOf(set)))
	require.Equal(t, 1, recordingStreams(t, pa), "kept ready, the device is open before any dictation")
	dictateOnce(t, a, pa, nil)
	time.Sleep(2500 * time.Millisecond)
	require.Equal(t, 1, recordingStreams(t, pa), "kept ready, the device stays open")

	// A new default input (a headset plugged in) is used by the next
	// dictation, even though the old device was still open.
	mod, err := pa.Pactl("load-module", "module-null-sink", "sink_name=headset", "sink_properties=device.description=headset")
	require.NoError(t, err)
	_, err = pa.Pactl("set-default-source", "headset.monitor")
	require.NoError(t, err)
	dictateOnce(t, a, pa, func() {
		require.Contains(t, cr.rec.Device().Name, "headset", "the new default input is recorded from")
		// Unplugged mid-recording: capture goes on on the default, and
		// the user is told.
		_, err := pa.Pactl("unload-module", strings.TrimSpace(mod))
		require.NoError(t, err)
		ev.wait(t, "dictation:warning", func(d any) bool {
			return strings.Contains(d.(Warning).Message, "continues on")
		}, 8*time.Second)
		st, err := a.Dictation.Status()
		require.NoError(t, err)
		require.Equal(t, DictRecording, st.State, "the recording goes on")
	})

	// Opt out again: the idle device closes at once.
	set.KeepMicReady = false
	set, err = a.Settings.Update(set)
	require.NoError(t, err)
	require.NoError(t, cr.SetMicPolicy(set.InputDevice, MicOptionsOf(set)))
	require.Zero(t, recordingStreams(t, pa))
}
