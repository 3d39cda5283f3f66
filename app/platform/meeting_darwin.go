package platform

import (
	"github.com/harkapp/hark/audio/capture"
	am "github.com/harkapp/hark/audio/meeting"
	"github.com/harkapp/hark/macos/systemaudio"
)

// MeetingCapture is a meeting's devices on macOS: the default microphone,
// and what the Mac plays through a Core Audio process tap (macOS 14.2 and
// later; macos/systemaudio), which has no monitor source to open.
func MeetingCapture() am.CaptureConfig {
	return am.CaptureConfig{MonitorID: systemaudio.DeviceID, Open: func(o capture.Options) (am.Source, error) {
		if o.DeviceID == systemaudio.DeviceID {
			return systemaudio.Open(o)
		}
		return am.OpenDevice(o)
	}}
}
