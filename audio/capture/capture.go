// Package capture records microphone audio as 16 kHz mono float32 samples.
//
// The cgo build uses miniaudio through github.com/gen2brain/malgo: miniaudio
// converts whatever the device delivers (rate, channels, format) to what we
// ask for, so every consumer sees Whisper's input format. A device that
// stops on its own (unplugged, a Bluetooth headset switching profile, the
// sound server moving or killing the stream) or stalls is reopened — on the
// same device when it is still there, else on the system default — and
// capture goes on; the caller hears about it through Options.OnEvent and
// keeps everything captured so far. Without cgo (the darwin CGO_ENABLED=0
// build) every entry point returns ErrUnavailable.
package capture

import (
	"errors"
	"time"
)

// ErrUnavailable is returned when this build has no capture backend.
var ErrUnavailable = errors.New("capture: microphone capture is not available in this build (it needs cgo and miniaudio)")

// ErrNoDevice is returned when no real input device exists (only
// miniaudio's null device, which records silence).
var ErrNoDevice = errors.New("capture: no audio input device found (is a sound server or ALSA device available?)")

// ErrNoMonitor is returned when the system audio cannot be recorded: no
// default output device, or one without a monitor source (a sound server
// other than PulseAudio or PipeWire).
var ErrNoMonitor = errors.New("capture: no monitor of the default output device (system audio is recorded through PulseAudio or PipeWire)")

// SampleRate is the rate samples are delivered at (Whisper's).
const SampleRate = 16000

// Device is an input device. ID is stable for the life of the device and
// is what Options.DeviceID takes.
type Device struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Default bool   `json:"default"`
}

// Event kinds reported through Options.OnEvent.
const (
	// EventLost: the device stopped or stalled; samples may be missing
	// until EventReopened.
	EventLost = "lost"
	// EventReopened: capture goes on, on Event.Device.
	EventReopened = "reopened"
	// EventError: reopening failed; it is retried until Stop or Close.
	EventError = "error"
)

// Event reports a device change while capturing.
type Event struct {
	Kind   string
	Device Device
	Err    error
}

// Options configure a capture stream.
type Options struct {
	// DeviceID picks the device ("" = the system default).
	DeviceID string
	// OnData receives every captured period (mono, SampleRate). It runs on
	// the audio thread: it must not block, and samples is only valid
	// during the call.
	OnData func(samples []float32)
	// OnEvent, if set, is told about lost and reopened devices (from a
	// goroutine of the stream, never the audio thread).
	OnEvent func(Event)
	// PeriodMs is the callback period (default 10 ms).
	PeriodMs int
	// Backlog is how much audio the sound server holds for a capture
	// thread that is held up (a loaded machine can leave it unscheduled
	// for hundreds of milliseconds) before it drops some (default 3 s).
	// It costs no latency: periods are still delivered as they fill.
	Backlog time.Duration
	// StallTimeout: a started device that delivers nothing for this long
	// is treated as lost and reopened (default 1 s).
	StallTimeout time.Duration
	// NullBackend uses miniaudio's null backend (silence at real-time
	// pace), for tests on machines without any sound server.
	NullBackend bool
}
