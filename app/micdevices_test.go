package app

import (
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// dev is a device as audio/capture reports it from malgo: the ID is the
// hex of miniaudio's device ID (the ALSA PCM or PulseAudio source name).
func dev(id, name string, def bool) Device {
	return Device{ID: hex.EncodeToString([]byte(id)), Name: name, Default: def}
}

// The microphone list drops ALSA plugin pseudo-devices and monitor
// sources, and keeps the cards, the default and the chosen device.
func TestMicrophones(t *testing.T) {
	cases := []struct {
		dev  Device
		keep bool
	}{
		// ALSA backend (no sound server), as alsa-plugins and alsa-lib list them.
		{dev("default", "Default ALSA Device", true), true},
		{dev("sysdefault:CARD=PCH", "HDA Intel PCH, ALC3246 Analog", false), true},
		{dev("hw:CARD=PCH,DEV=0", "HDA Intel PCH, ALC3246 Analog Direct hardware device without any conversions", false), true},
		{dev("plughw:CARD=C920,DEV=0", "HD Pro Webcam C920, USB Audio", false), true},
		{dev("dsnoop:CARD=PCH,DEV=0", "HDA Intel PCH, ALC3246 Analog Direct sample snooping device", false), true},
		{dev("jack", "JACK Audio Connection Kit", false), false},
		{dev("lavrate", "Rate Converter Plugin Using Libav/FFmpeg Library", false), false},
		{dev("samplerate", "Rate Converter Plugin Using Samplerate Library", false), false},
		{dev("speexrate", "Rate Converter Plugin Using Speex Resampler", false), false},
		{dev("pulse", "PulseAudio Sound Server", false), false},
		{dev("pipewire", "PipeWire Sound Server", false), false},
		{dev("upmix", "Plugin for channel upmix (4,6,8)", false), false},
		{dev("vdownmix", "Plugin for channel downmix (stereo) with a simple spacialization", false), false},
		{dev("null", "Discard all samples (playback) or generate zero samples (capture)", false), false},
		{dev("oss", "Open Sound System", false), false},
		{dev("speex", "Plugin using Speex DSP (resample, agc, denoise, echo, dereverb)", false), false},
		// PulseAudio / PipeWire: sources, and the monitors of the outputs.
		{dev("alsa_input.pci-0000_00_1f.3.analog-stereo", "Built-in Audio Analog Stereo", false), true},
		{dev("alsa_output.pci-0000_00_1f.3.analog-stereo.monitor", "Monitor of Built-in Audio Analog Stereo", false), false},
		{dev("bluez_input.00_1B_66_AA_BB_CC.0", "WH-1000XM4", false), true},
		// A default that is a monitor is still the default.
		{dev("vsink.monitor", "Monitor of vsink", true), true},
		// Core Audio: UIDs.
		{dev("BuiltInMicrophoneDevice", "MacBook Pro Microphone", false), true},
		// An ID that is not hex is judged by its name.
		{Device{ID: "x", Name: "Rate Converter Plugin Using Samplerate Library"}, false},
	}
	var in, want []Device
	for _, c := range cases {
		in = append(in, c.dev)
		if c.keep {
			want = append(want, c.dev)
		}
	}
	require.Equal(t, want, microphones(in, ""))

	// The chosen device stays listed, whatever it is.
	chosen := dev("samplerate", "Rate Converter Plugin Using Samplerate Library", false)
	require.Contains(t, microphones(in, chosen.ID), chosen)
}

// listRecorder is a clipRecorder whose device list is given.
type listRecorder struct {
	clipRecorder
	list []Device
}

func (r *listRecorder) Devices() ([]Device, error) { return r.list, nil }

// The list the app shows (Dictation.Devices) is the filtered one.
func TestDictationDevicesShowsMicrophones(t *testing.T) {
	a := openApp(t, t.TempDir(), testModelsDir(t), nil)
	card := dev("sysdefault:CARD=PCH", "HDA Intel PCH, ALC3246 Analog", false)
	def := dev("default", "Default ALSA Device", true)
	a.SetRecorder(&listRecorder{clipRecorder: clipRecorder{clip: shared.Path(t, "audio", "jfk.wav")},
		list: []Device{def, dev("jack", "JACK Audio Connection Kit", false), card, dev("lavrate", "Rate Converter Plugin Using Libav/FFmpeg Library", false)}})
	got, err := a.Dictation.Devices()
	require.NoError(t, err)
	require.Equal(t, []Device{def, card}, got)
}
