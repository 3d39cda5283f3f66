package app

import (
	"encoding/hex"
	"slices"
	"strings"
)

// alsaPlugins are the ALSA PCMs of alsa-plugins and alsa-lib's own
// configuration that the ALSA backend lists as capture devices: sample
// rate converters, mixers, sound servers reached through ALSA and "null".
// None is a microphone; the cards (hw:, plughw:, sysdefault:, dsnoop:...)
// and "default" are listed.
var alsaPlugins = []string{"a52", "jack", "lavrate", "lavcrate", "samplerate", "speexrate", "speex", "pulse",
	"pipewire", "upmix", "vdownmix", "null", "oss", "usbstream", "dmix"}

// pluginNames start the descriptions of such PCMs, for backends whose
// IDs say less.
var pluginNames = []string{"jack audio connection kit", "rate converter plugin", "plugin for channel",
	"plugin using speex", "discard all samples", "open sound system", "pulseaudio sound server",
	"pipewire sound server", "monitor of "}

// microphones is the input list the app shows: the capture devices a user
// means by "microphone" and the default, without the ALSA plugin
// pseudo-devices and the sound servers' monitors of their outputs (which
// audio/capture keeps listing for whoever records what is played). The
// chosen device ("" = default) stays listed whatever it is, so the
// setting never shows as blank.
func microphones(ds []Device, chosen string) []Device {
	out := make([]Device, 0, len(ds))
	for _, d := range ds {
		if d.Default || d.ID == chosen || !pseudoDevice(d) {
			out = append(out, d)
		}
	}
	return out
}

// pseudoDevice tells an ALSA plugin or a monitor source from a capture
// device. IDs are miniaudio's device IDs in hex: the ALSA PCM name, the
// PulseAudio source name, Core Audio's UID.
func pseudoDevice(d Device) bool {
	id := d.ID
	if raw, err := hex.DecodeString(id); err == nil {
		id = string(raw)
	}
	if strings.HasSuffix(id, ".monitor") || slices.Contains(alsaPlugins, id) {
		return true
	}
	name := strings.ToLower(d.Name)
	return slices.ContainsFunc(pluginNames, func(p string) bool { return strings.HasPrefix(name, p) })
}
