package app

import (
	"errors"
	"time"

	"github.com/harkapp/hark/app/dictation"
	"github.com/harkapp/hark/audio/capture"
)

// MicOptions say when the input device closes after a recording.
type MicOptions struct {
	// KeepReady keeps it open (capturing into the pre-roll ring) until
	// the app quits or the setting is turned off.
	KeepReady bool
	// CloseAfter is how long it stays open after the last recording, so
	// back-to-back dictations don't reopen it (0: at once).
	CloseAfter time.Duration
}

// MicOptionsOf are the settings' microphone options.
func MicOptionsOf(d SettingsData) MicOptions {
	return MicOptions{KeepReady: d.KeepMicReady, CloseAfter: time.Duration(d.MicCloseSeconds) * time.Second}
}

// micPolicy closes a CaptureRecorder's device when it has been idle long
// enough. Its fields are guarded by the CaptureRecorder's ops mutex.
type micPolicy struct {
	timer *time.Timer
	gen   uint64 // bumped by cancelClose: a timer that fired late does nothing
	// devices lists the input devices (nil: capture.Devices; tests).
	devices func() ([]capture.Device, error)
}

// cancelClose forgets a pending close (a recording or Arm came first).
func (m *micPolicy) cancelClose() {
	m.gen++
	if m.timer != nil {
		m.timer.Stop()
		m.timer = nil
	}
}

// afterRecording schedules rec's close per o. Called with c.ops held.
func (m *micPolicy) afterRecording(c *CaptureRecorder, rec *dictation.Recorder, o MicOptions) {
	m.cancelClose()
	if o.KeepReady {
		return
	}
	gen := m.gen
	m.timer = time.AfterFunc(o.CloseAfter, func() { c.closeIdle(rec, gen) })
}

// closeIdle closes rec's device if nothing used it since the close was
// scheduled.
func (c *CaptureRecorder) closeIdle(rec *dictation.Recorder, gen uint64) {
	c.ops.Lock()
	defer c.ops.Unlock()
	if c.mic.gen != gen || c.rec != rec || rec.Recording() {
		return
	}
	c.mic.timer = nil
	// Under c.ops, so a Start waits for the close instead of racing it;
	// the device's event goroutine, which Disarm waits for, never takes
	// it (onEvent).
	_ = rec.Disarm()
}

// SetMicPolicy applies the microphone settings now: kept ready, the device
// ("" = default) opens at once; otherwise an idle open device closes.
// The desktop app calls it at start-up (once the microphone is allowed:
// the OS prompt belongs to the first dictation) and when settings change.
func (c *CaptureRecorder) SetMicPolicy(device string, o MicOptions) error {
	if o.KeepReady {
		return c.Arm(device)
	}
	c.ops.Lock()
	defer c.ops.Unlock()
	c.mic.cancelClose()
	if c.rec == nil || c.rec.Recording() {
		return nil // a recording's Stop schedules the close
	}
	return c.rec.Disarm()
}

// MicOpen reports whether the input device is open (for the tray and
// tests).
func (c *CaptureRecorder) MicOpen() bool {
	c.ops.Lock()
	defer c.ops.Unlock()
	return c.rec != nil && c.rec.Device() != (capture.Device{})
}

// defaultDevice is the system's default input now.
func (m *micPolicy) defaultDevice() (capture.Device, bool) {
	list := m.devices
	if list == nil {
		list = capture.Devices
	}
	ds, err := list()
	if err != nil {
		return capture.Device{}, false
	}
	for _, d := range ds {
		if d.Default {
			return d, true
		}
	}
	return capture.Device{}, false
}

// deviceHooks are the current recording's device callbacks, read by
// onEvent without c.mu (see closeIdle).
type deviceHooks struct {
	onDevice   func(string)
	onNoDevice func()
}

// onEvent follows the device under a recording: a lost device is replaced
// by the default (audio/capture) and the user is told; when no device is
// left the recording ends, keeping what was captured.
func (c *CaptureRecorder) onEvent(e capture.Event) {
	h := c.hooks.Load()
	if h == nil {
		return // idle: the stream reopens on its own
	}
	switch e.Kind {
	case capture.EventLost:
		if h.onDevice != nil {
			h.onDevice("the input device was lost; switching to the default input…")
		}
	case capture.EventReopened:
		if h.onDevice != nil {
			h.onDevice("recording continues on " + e.Device.Name)
		}
	case capture.EventError:
		if _, ok := c.mic.anyDevice(); !ok && h.onNoDevice != nil && c.hooks.CompareAndSwap(h, nil) {
			if h.onDevice != nil {
				h.onDevice("no input device is left; the recording ends here")
			}
			go h.onNoDevice()
		}
	}
}

// anyDevice is a real input device, if one is left.
func (m *micPolicy) anyDevice() (capture.Device, bool) {
	list := m.devices
	if list == nil {
		list = capture.Devices
	}
	ds, err := list()
	if errors.Is(err, capture.ErrNoDevice) || (err == nil && len(ds) == 0) {
		return capture.Device{}, false
	}
	if err != nil { // not known to be gone: capture keeps trying
		return capture.Device{}, true
	}
	return ds[0], true
}
