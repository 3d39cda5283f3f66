//go:build !cgo

package capture

// Devices lists the input devices; without cgo there is no backend.
func Devices() ([]Device, error) { return nil, ErrUnavailable }

// Stream is an open capture device; without cgo none can be opened.
type Stream struct{}

// Open returns ErrUnavailable: this build has no capture backend.
func Open(Options) (*Stream, error) { return nil, ErrUnavailable }

// Device reports nothing: no stream can exist in this build.
func (*Stream) Device() Device { return Device{} }

// Start returns ErrUnavailable.
func (*Stream) Start() error { return ErrUnavailable }

// Stop returns ErrUnavailable.
func (*Stream) Stop() error { return ErrUnavailable }

// Close returns nil: there is nothing to release.
func (*Stream) Close() error { return nil }

// DefaultMonitor returns ErrUnavailable.
func DefaultMonitor() (Device, error) { return Device{}, ErrUnavailable }
