//go:build cgo

package capture

import (
	"fmt"
	"strings"

	"github.com/gen2brain/malgo"
)

// DefaultMonitor is the input device that records what the default output
// device plays: on PulseAudio and PipeWire (through pipewire-pulse) every
// sink has a monitor source named after it with ".monitor" appended.
func DefaultMonitor() (Device, error) {
	ctx, err := initContext(false)
	if err != nil {
		return Device{}, err
	}
	defer func() { _ = ctx.Uninit(); ctx.Free() }()
	sinks, err := ctx.Devices(malgo.Playback)
	if err != nil {
		return Device{}, fmt.Errorf("capture: listing output devices: %w", err)
	}
	sink := ""
	for i := range sinks {
		if sinks[i].IsDefault != 0 {
			sink = backendName(sinks[i].ID)
		}
	}
	if sink == "" {
		return Device{}, ErrNoMonitor
	}
	infos, err := ctx.Devices(malgo.Capture)
	if err != nil {
		return Device{}, fmt.Errorf("capture: listing devices: %w", err)
	}
	for i := range infos {
		if backendName(infos[i].ID) == sink+".monitor" {
			return Device{ID: infos[i].ID.String(), Name: infos[i].Name(), Default: infos[i].IsDefault != 0}, nil
		}
	}
	return Device{}, fmt.Errorf("%w (the default output %q has no monitor source)", ErrNoMonitor, sink)
}

// backendName is the sound server's name for a device: miniaudio's
// PulseAudio device ID is the NUL-terminated sink or source name.
func backendName(id malgo.DeviceID) string {
	n, _, _ := strings.Cut(string(id[:]), "\x00")
	return n
}
