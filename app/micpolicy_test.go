package app

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio/capture"
)

// TestMicNoDeviceLeft: a reopen that fails while devices remain is retried
// (audio/capture goes on trying); when no device is left the recording is
// ended once, and the user is told.
func TestMicNoDeviceLeft(t *testing.T) {
	var devs []capture.Device
	c := NewCaptureRecorder(nil)
	c.mic.devices = func() ([]capture.Device, error) { return devs, nil }
	var msgs []string
	ended := make(chan struct{}, 2)
	c.hooks.Store(&deviceHooks{onDevice: func(m string) { msgs = append(msgs, m) }, onNoDevice: func() { ended <- struct{}{} }})

	devs = []capture.Device{{ID: "1", Name: "USB mic", Default: true}}
	c.onEvent(capture.Event{Kind: capture.EventError, Err: errors.New("busy")})
	require.Empty(t, ended, "a device is left: capture keeps trying")
	c.onEvent(capture.Event{Kind: capture.EventReopened, Device: devs[0]})
	require.Equal(t, []string{"recording continues on USB mic"}, msgs)

	devs = nil
	c.onEvent(capture.Event{Kind: capture.EventError, Err: errors.New("gone")})
	<-ended
	c.onEvent(capture.Event{Kind: capture.EventError, Err: errors.New("gone")})
	require.Empty(t, ended, "the recording is ended once")
	require.Contains(t, msgs[len(msgs)-1], "no input device is left")

	// Idle (no recording's hooks): nothing to end.
	c.onEvent(capture.Event{Kind: capture.EventError, Err: errors.New("gone")})
	require.Empty(t, ended)
}

// TestMicSettingsValidate bounds the close delay.
func TestMicSettingsValidate(t *testing.T) {
	d := defaultSettings()
	require.False(t, d.KeepMicReady)
	require.Equal(t, 10, d.MicCloseSeconds)
	d.MicCloseSeconds = -1
	require.ErrorContains(t, d.validate(), "micCloseSeconds")
	d.MicCloseSeconds = 3601
	require.ErrorContains(t, d.validate(), "micCloseSeconds")
}
