package platform

import am "github.com/harkapp/hark/audio/meeting"

// MeetingCapture is a meeting's devices on Linux: the default microphone
// and the default output's monitor source (the defaults of
// audio/meeting).
func MeetingCapture() am.CaptureConfig { return am.CaptureConfig{} }
